"""ragdive's folder in the user's cache, the one rule every part of ragdive uses (the packaged model's weights,
jinja's compiled templates; scripts/build_llama.py, which runs before anything is installed, keeps a copy of it):
``$RAGDIVE_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragdive``, else ``~/.cache/ragdive``, on every system, so a user
finds (and clears) everything ragdive keeps in one place."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    explicit = os.environ.get("RAGDIVE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragdive"
