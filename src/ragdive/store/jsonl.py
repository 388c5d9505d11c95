"""Append-only JSON Lines with one fsync'ed line per record, and a reader that survives a torn last line."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import StoreError
from ..redaction import redact

M = TypeVar("M", bound=BaseModel)


def to_json_line(record: BaseModel | dict[str, Any]) -> str:
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    return json.dumps(redact(data), ensure_ascii=False, separators=(",", ":")) + "\n"


class JsonlAppender:
    """Appends records to one file. Each record is a single write of one line followed by flush + fsync, so a
    kill leaves at most one torn line at the end, which the reader reports and skips."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        line = to_json_line(record).encode("utf-8")
        with self._lock:
            _repair_torn_tail(self.path)
            with open(self.path, "ab") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())

    def append_all(self, records: Iterable[BaseModel | dict[str, Any]]) -> None:
        """Append every record in one write and one fsync: a batch that must land whole (an annotation import)
        is either on disk or, cut by a kill, a torn last line the reader skips; never a readable half."""
        data = "".join(to_json_line(r) for r in records).encode("utf-8")
        if not data:
            return
        with self._lock:
            _repair_torn_tail(self.path)
            with open(self.path, "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())


def _repair_torn_tail(path: Path) -> None:
    """A previous process may have died mid-line; start the next record on a fresh line so it stays readable."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) != b"\n":
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())


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
                data = json.loads(line)
            except json.JSONDecodeError:
                result.torn_lines.append(number)
                continue
            try:
                result.records.append(model.model_validate(data))
            except ValidationError as exc:
                raise StoreError(f"{path.name} line {number} is not a valid {model.__name__}: {exc}") from exc
    return result


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
            parsed = json.loads(line)
        except json.JSONDecodeError:
            continue  # torn by a kill: read_jsonl reports it, a counter skips it
        try:
            records.append(model.model_validate(parsed))
        except ValidationError as exc:
            raise StoreError(f"{path.name} holds a line that is not a valid {model.__name__}: {exc}") from exc
    return records, offset + end
