"""Where jinja keeps the templates it compiled, from one process to the next: jinja2's own
FileSystemBytecodeCache in ragdive's folder of the user's cache (user_cache.py, as for the packaged model), under
``jinja/``.

Why: compiling the prompts and the report's template was ~0.075 s of every `ragdive run`'s CPU (issue 27: a
cached re-run's start-up). An entry is found by the template's name and file and used only when its source's
checksum and the jinja and Python versions match, so an edited prompt or an upgrade compiles again. The cache is
only ever a shortcut: a folder that cannot be made or written, or an entry that does not load, leaves the template
compiled from its source as without it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from .user_cache import user_cache_dir


class _Shortcut(jinja2.FileSystemBytecodeCache):
    """jinja2's cache, except that a failure to read or write an entry means no shortcut, never an error."""

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # unreadable or damaged (a disk error, a truncated copy): compiled again and rewritten
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        try:
            Path(self.directory).mkdir(parents=True, exist_ok=True)  # made when first written, not at import
            super().dump_bytecode(bucket)
        except OSError:  # a folder that cannot be made or written, a full disk: the template was compiled anyway
            pass


def folder() -> Path:
    return user_cache_dir() / "jinja"


@cache
def bytecode_cache() -> jinja2.BytecodeCache:
    """The cache every jinja environment of ragdive uses (one per process)."""
    return _Shortcut(str(folder()))
