from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.models import ScriptedModel, registry

from .scripted_judge import rule_judge


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's default model cache (.ragdive-cache) and runs/ folder are relative: keep them out of the repo
    and out of the next test."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def rulejudge_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rulejudge/<name>`: the prompt-reading scripted judge, reachable from the CLI's --model; registered only
    for the duration of each evaluation test so other tests see the registry as shipped."""
    monkeypatch.setitem(
        registry.PROVIDERS._entries, "rulejudge", lambda name, **_: ScriptedModel(name, responder=rule_judge)
    )
