"""One folder of the user's cache for everything ragdive keeps (ragdive/user_cache.py): the packaged model's
weights, jinja's compiled templates and (scripts/build_llama.py, a stdlib-only copy of the rule) the llama.cpp
wheel all go under the same folder, whatever the environment says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ragdive import template_cache
from ragdive.user_cache import user_cache_dir

ROOT = Path(__file__).resolve().parents[1]


def build_llama_cache_root() -> Path:
    spec = importlib.util.spec_from_file_location("build_llama", ROOT / "scripts" / "build_llama.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.cache_root())


@pytest.mark.parametrize(
    ("ragdive_dir", "xdg", "expected"),
    [
        ("/explicit", "/xdg", "/explicit"),
        ("", "/xdg", "/xdg/ragdive"),
        (None, None, "~/.cache/ragdive"),
    ],
)
def test_every_part_of_ragdive_keeps_its_files_in_one_folder(
    monkeypatch: pytest.MonkeyPatch, ragdive_dir: str | None, xdg: str | None, expected: str
) -> None:
    for name, value in (("RAGDIVE_CACHE_DIR", ragdive_dir), ("XDG_CACHE_HOME", xdg)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    folder = Path(expected).expanduser()
    assert user_cache_dir() == folder
    assert template_cache.folder() == folder / "jinja"
    assert build_llama_cache_root() == folder
