"""A torn last line (a write cut by a kill, a full disk) is cut off before anything is appended after it.

Appending after it used to leave it in the middle of the file for good: ragdive reads around such a line, but
``pandas.read_json(lines=True)`` and ``json`` line readers fail on it. So the writer of a run cuts the file back to
its last complete line (one truncate, after the cut bytes are safe in ``<file>.torn``, one JSON line per cut):
every run file stays valid JSON Lines after any crash, and nothing that was on disk is thrown away.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

SIDE_SUFFIX = ".torn"
_CHUNK = 1 << 16


def _last_line_end(fh: object, size: int) -> int:
    """The offset just past the last newline (0 when there is none)."""
    pos = size
    while pos > 0:
        step = min(_CHUNK, pos)
        pos -= step
        fh.seek(pos)  # type: ignore[attr-defined]
        newline = fh.read(step).rfind(b"\n")  # type: ignore[attr-defined]
        if newline >= 0:
            return pos + newline + 1
    return 0


def cut_torn_tail(path: Path) -> int:
    """Cut ``path`` back to its last complete line, the cut bytes appended to ``path.torn`` first (fsync'ed, so a
    kill between the two steps leaves the line in both, never in neither). Returns the bytes cut."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        keep = _last_line_end(fh, size)
        fh.seek(keep)
        cut = fh.read(size - keep)
        entry = {
            "file": path.name,
            "offset": keep,
            "cut": datetime.now(UTC).isoformat(),
            "text": cut.decode("utf-8", errors="replace"),
        }
        with open(path.with_name(path.name + SIDE_SUFFIX), "ab") as side:
            side.write((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
            side.flush()
            os.fsync(side.fileno())
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return size - keep


def cut_torn_tails(directory: Path) -> None:
    """Every ``*.jsonl`` of a directory its writer just opened."""
    for path in sorted(Path(directory).glob("*.jsonl")):
        cut_torn_tail(path)
