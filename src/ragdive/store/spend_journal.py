"""spend.jsonl: every model request's tokens, cost, retries and faults, one line each, written when the ledger
counts it (ragdive.models.usage.UsageLedger) — before any record made from that call is written.

The manifest's spend (what the run recorder adds from its session's ledger snapshots) is written only at a
recorder's writes; a kill -9 between two writes used to lose what was spent since (3 % of the tokens per kill,
11-16 % after ten). The journal keeps it: a line is one ``write`` to a file opened for appending, so it is in the
operating system's page cache, safe from a kill of the process, the moment the call is counted; it is fsync'ed
with the run's records. Each manifest spend line remembers how many journal lines of its (role, model) it already
accounts for (``journal_lines``); the first recorder of a process that opens the journal adds what a killed
session's lines hold beyond that, so after any number of kills the manifest equals what the models were asked
for, minus at most the calls in flight at each kill.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

from ..records import SPEND_COUNTS, ModelSpend, Usage
from . import line_json

SPEND = "spend.jsonl"

SpendKey = tuple[str, str]


class SpendJournal:
    """The one appender of a run's spend.jsonl in this process (see ``journal_for``); ``counts`` are the lines
    of each (role, model) in the file (those found when it was opened, plus those appended since)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.counts: dict[SpendKey, int] = {key: len(v) for key, v in read_journal(path.parent).items()}
        self._cached_lines: dict[SpendKey, bytes] = {}
        """A cache hit's line per (role, model) (see append_cached)."""

    def append(self, line: ModelSpend) -> None:
        # the fields that differ from their defaults, as model_dump(exclude_defaults=True) would give them (the same
        # text), read directly: a call's line is written on the event loop for every request
        data: dict[str, object] = {"role": line.role, "model": line.model}
        for name, default in _COUNTED:
            value = getattr(line, name)
            if value != default:
                data[name] = value
        self._write(line.role, line.model, data)

    def append_call(self, role: str, model: str, usage: Usage) -> None:
        """The line ``append`` writes for ``ModelSpend(role=role, model=model, calls=1, ...)`` with the tokens and
        cost of ``usage`` (one answered request: UsageLedger.record), made from ``usage`` directly: the record
        was built on the event loop for every request only to be read back here."""
        data: dict[str, object] = {"role": role, "model": model, "calls": 1}
        for name, default in _CALL_COUNTED:
            value = getattr(usage, name)
            if value != default:
                data[name] = value
        self._write(role, model, data)

    def _write(self, role: str, model: str, data: dict[str, object]) -> None:
        text = line_json.dumps(data) + b"\n"
        with _fds_lock:  # one write per line to a file opened for appending: whole lines, never interleaved
            os.write(self._opened(), text)
            key = (role, model)
            self.counts[key] = self.counts.get(key, 0) + 1

    def append_cached(self, role: str, model: str) -> None:
        """A cache hit's line: ``append(ModelSpend(role=role, model=model, cached_calls=1))``'s text, made once
        per (role, model)."""
        key = (role, model)
        text = self._cached_lines.get(key)
        if text is None:
            data = {"role": role, "model": model, "cached_calls": 1}  # the other counts are at their defaults
            text = self._cached_lines[key] = line_json.dumps(data) + b"\n"
        with _fds_lock:
            os.write(self._opened(), text)
            self.counts[key] = self.counts.get(key, 0) + 1

    def _opened(self) -> int:
        """The journal's file descriptor (under _fds_lock), opened at its first line and kept: an open and a close
        per line cost more than the write (~3 % of a 200 x 5 run's CPU). A process may write many runs (a sweep, a
        test suite): only the OPEN_JOURNALS used last stay open."""
        if self._fd is not None:
            _open_fds.move_to_end(self)
            return self._fd
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        _open_fds[self] = None
        if len(_open_fds) > OPEN_JOURNALS:
            oldest, _ = _open_fds.popitem(last=False)
            if oldest._fd is not None:
                os.close(oldest._fd)
                oldest._fd = None
        return self._fd


OPEN_JOURNALS = 8
"""Journals whose file stays open between lines (the most recently written)."""
_open_fds: OrderedDict[SpendJournal, None] = OrderedDict()
_fds_lock = threading.Lock()

_COUNTED: tuple[tuple[str, object], ...] = tuple(
    (name, ModelSpend.model_fields[name].get_default(call_default_factory=True)) for name in SPEND_COUNTS
)
"""A journal line's counted fields (in the record's order) and their defaults (a line leaves a default out)."""
_CALL_COUNTED = tuple((name, default) for name, default in _COUNTED if name in Usage.model_fields)
"""The counted fields a request's usage carries (tokens, cost), in the record's order, after ``calls``."""


_open: dict[Path, SpendJournal] = {}
_open_lock = threading.Lock()


def journal_for(run: Path) -> tuple[SpendJournal, bool]:
    """This process's journal of the run in ``run``, and whether it was opened just now (the caller then adds
    what earlier sessions journaled beyond the manifest, once, before any line of this process is written)."""
    path = (Path(run) / SPEND).resolve()
    with _open_lock:
        journal = _open.get(path)
        if journal is not None:
            return journal, False
        journal = _open[path] = SpendJournal(path)
        return journal, True


def read_journal(run: Path) -> dict[SpendKey, list[ModelSpend]]:
    """Every whole line of the run's journal, per (role, model), in order (a torn last line is skipped)."""
    path = Path(run) / SPEND
    lines: dict[SpendKey, list[ModelSpend]] = {}
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return lines
    for text in raw.split(b"\n"):
        if not text.strip():
            continue
        try:
            line = ModelSpend.model_validate_json(text)
        except ValueError:
            continue  # the torn last line of a kill: its call is one of those in flight
        lines.setdefault((line.role, line.model), []).append(line)
    return lines
