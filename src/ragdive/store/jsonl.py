"""Append-only JSON Lines, every line fsync'ed before it counts, and a reader that survives a torn last line.

Group commit (``write``, for the event loop): records written at about the same time share one write and one
fsync, done in a worker thread so the loop keeps running; each caller's await returns only once its own line is
on disk. A line is counted as written by nobody before that fsync, so a kill loses at most lines whose writers
had not yet been told "written" — which resume then redoes — and never splits one line from the next: a batch is
whole lines. A torn last line is cut off (kept in a side file, see torn.py) before this process's first write, and
a write the disk refused midway (full, a size limit) is taken back: the file always ends on a whole line.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import StoreError, storage_error
from ..redaction import redact_text
from .caps import capped_json
from .lock import check_writable
from .torn import cut_torn_tail

M = TypeVar("M", bound=BaseModel)


def to_json_line(record: BaseModel | dict[str, Any], max_text_chars: int | None = None) -> str:
    """One line of JSON, every string cut to ``max_text_chars`` (store.caps), its secrets masked as text in one
    pass (redaction.redact_text: not a walk of the record)."""
    return redact_text(capped_json(record, max_text_chars)) + "\n"


class JsonlAppender:
    """Appends records to one file: whole lines in a single write followed by flush + fsync (one line from
    ``append``, a group of concurrent writers' lines from ``write``, a batch from ``append_all``), so a kill leaves
    at most one torn line at the end, which the reader reports and skips."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._batch: list[tuple[bytes, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._opened = False

    def append(self, record: BaseModel | dict[str, Any], max_text_chars: int | None = None) -> None:
        self._write_lines(to_json_line(record, max_text_chars).encode("utf-8"))

    async def write(self, record: BaseModel | dict[str, Any], max_text_chars: int | None = None) -> None:
        """Append ``record``; returns once its line is fsync'ed, sharing the write with concurrent callers."""
        loop = asyncio.get_running_loop()
        written: asyncio.Future[None] = loop.create_future()
        self._batch.append((to_json_line(record, max_text_chars).encode("utf-8"), written))
        if self._flusher is None or self._flusher.done() or self._flusher.get_loop() is not loop:
            # a task of its own, not the first caller's coroutine: a cancelled caller must not strand the others
            self._flusher = loop.create_task(self._flush())
        await written

    async def drain(self) -> None:
        """Wait until the lines handed over so far are written (also those of writers that were cancelled: their
        lines still land, and whoever counts the file next should see them)."""
        flusher = self._flusher
        if flusher is not None and not flusher.done() and flusher.get_loop() is asyncio.get_running_loop():
            await asyncio.wait([flusher])  # wait, don't raise: a failed write was reported to its writers

    async def _flush(self) -> None:
        while self._batch:
            batch, self._batch = self._batch, []
            try:
                await asyncio.to_thread(self._write_lines, b"".join(line for line, _ in batch))
            except asyncio.CancelledError:
                # the loop is going away: nobody is told "written" (the thread may still finish the write; a
                # line on disk that its writer never counted is found by the next session's reader, not redone)
                for _, written in batch:
                    written.cancel()
                raise
            except Exception as exc:
                for _, written in batch:
                    if not written.done():
                        written.set_exception(exc)
            else:
                for _, written in batch:
                    if not written.done():
                        written.set_result(None)

    def _write_lines(self, data: bytes) -> None:
        with self._lock:
            if not self._opened:  # the first write of this process: no other writer may hold the run
                check_writable(self.path.parent)
                self._opened = True
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError as exc:
                raise storage_error(exc, self.path) from exc
            try:
                start = os.fstat(fd).st_size
                if start and os.pread(fd, 1, start - 1) != b"\n":  # a torn last line: cut it first (torn.py)
                    try:
                        cut_torn_tail(self.path)
                    except OSError as exc:
                        raise storage_error(exc, self.path) from exc
                    start = os.fstat(fd).st_size
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                except OSError as exc:
                    # a full disk or a size limit mid-batch: take the part back, so the file ends on a whole line
                    try:
                        os.ftruncate(fd, start)
                    except OSError:
                        pass  # the next write cuts it (above)
                    raise storage_error(exc, self.path) from exc
            finally:
                os.close(fd)

    def append_all(self, records: Iterable[BaseModel | dict[str, Any]], max_text_chars: int | None = None) -> None:
        """Append every record in one write and one fsync: a batch that must land whole (an annotation import)
        is either on disk or, cut by a kill, a torn last line the reader skips; never a readable half."""
        data = "".join(to_json_line(r, max_text_chars) for r in records).encode("utf-8")
        if data:
            self._write_lines(data)


@dataclass
class ReadResult(Generic[M]):
    """Records read back, plus what had to be skipped and why."""

    records: list[M] = field(default_factory=list)
    torn_lines: list[int] = field(default_factory=list)
    """1-based line numbers that were not valid JSON (a write cut by a kill)."""

    @property
    def problems(self) -> list[str]:
        return [f"line {n} is incomplete (a write was cut off) and was skipped" for n in self.torn_lines]


def read_jsonl(path: Path, model: type[M]) -> ReadResult[M]:
    """Read every complete record. A line that is not valid JSON (a torn write) is skipped and reported; a line
    that is valid JSON but not a valid record is a StoreError, because that is corruption, not a kill."""
    result: ReadResult[M] = ReadResult()
    if not path.exists():
        return result
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                result.records.append(parse_line(line, model))
            except TornLine:
                result.torn_lines.append(number)
            except ValidationError as exc:
                raise StoreError(f"{path.name} line {number} is not a valid {model.__name__}: {exc}") from exc
    return result


class TornLine(Exception):
    """A line that is not valid JSON: a write cut by a kill."""


def parse_line(line: str | bytes, model: type[M]) -> M:
    """One record from its JSON line, parsed by pydantic itself: no dict of the line made first, and the short
    strings every line repeats (field names in details, ids, metric and model names, fingerprints) shared through
    pydantic's string cache rather than one copy per line (the run's records read at the end of a run were
    ~35 % larger and ~1.4x slower to read via json.loads). TornLine when the line is not JSON at all."""
    try:
        return model.model_validate_json(line)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors(include_url=False, include_context=False)):
            raise TornLine from exc
        raise


def read_jsonl_tail(path: Path, model: type[M], offset: int = 0) -> tuple[list[M], int]:
    """The complete records appended after byte ``offset``, and the offset just past the last complete line: a
    counter that keeps the offset reads each line once, however long the run. A last line without its newline
    (being written, or cut by a kill) is left for a later read; once a later append has ended it, it is skipped
    like any torn line. Returns offset -1 when the file is shorter than ``offset`` (it is not the file that was
    read before: count it again from the start)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return [], 0 if offset == 0 else -1
    if size < offset:
        return [], -1
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read(size - offset)
    end = data.rfind(b"\n") + 1
    records: list[M] = []
    for line in data[:end].splitlines():
        if not line.strip():
            continue
        try:
            records.append(parse_line(line, model))
        except TornLine:
            continue  # torn by a kill: read_jsonl reports it, a counter skips it
        except ValidationError as exc:
            raise StoreError(f"{path.name} holds a line that is not a valid {model.__name__}: {exc}") from exc
    return records, offset + end
