"""importing.lazy_names: the one way a package imports some of its names on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_a_lazy_name_is_imported_on_first_use_and_kept() -> None:
    code = (
        "import sys, ragdive.pipeline as p\n"
        "assert 'ragdive.pipeline.replay' not in sys.modules\n"
        "first = p.run_replay\n"
        "assert 'ragdive.pipeline.replay' in sys.modules\n"
        "assert 'run_replay' in vars(p) and p.run_replay is first\n"
        "from ragdive.pipeline.replay import run_replay\n"
        "assert run_replay is first\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)  # a fresh interpreter: nothing imported before


def test_an_unknown_name_is_an_attribute_error() -> None:
    import ragdive.report

    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        ragdive.report.nothing_here  # noqa: B018
    assert not hasattr(ragdive.report, "also_not_here")


def test_a_lazy_name_may_come_from_another_library() -> None:
    code = (
        "import sys, ragdive.http_client as h\n"
        "assert 'httpx' not in sys.modules\n"
        "import httpx\n"
        "assert h.TransportError is httpx.TransportError and 'TransportError' in vars(h)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
