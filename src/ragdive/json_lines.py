"""One JSON object per non-empty line, as every JSONL input ragdive reads (corpora, static sets, other tools' runs)
is parsed: a bad line is one ConfigError naming the file and the line, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import ConfigError


def json_objects(text: str, where: Path | str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line of ``text`` (read from ``where``)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where} line {number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise ConfigError(f"{where} line {number}: expected a JSON object per line")
        yield number, row
