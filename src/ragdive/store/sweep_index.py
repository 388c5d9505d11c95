"""A sweep directory (docs/architecture.md, "The run directory"): ``sweep.json`` and ``runs/<run-id>/``. The only
writer of sweep.json; each write replaces the file atomically, so a sweep killed at any moment leaves the old index
or the new one, never half of one. The run directories are ordinary runs, written by RunStore."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import StoreError
from ..records._base import utc_now
from ..records.sweep import SweepCellEntry, SweepIndexRecord
from ..redaction import redact
from .lock import acquire
from .run import MANIFEST, RunStore, write_json_atomic

SWEEP_INDEX = "sweep.json"
RUNS = "runs"
TABLES = "tables.json"


class SweepStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._release: Callable[[], None] | None = None

    def hold_lock(self) -> None:
        """Take the sweep directory's writer lock until ``release_lock`` (or the process's end): one sweep
        command writes a sweep directory at a time, for its whole life (the Ray driver's included)."""
        if self._release is None:
            self._release = acquire(self.path)

    def release_lock(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None

    @property
    def runs_root(self) -> Path:
        return self.path / RUNS

    @classmethod
    def exists(cls, path: Path) -> bool:
        return (Path(path) / SWEEP_INDEX).is_file()

    @classmethod
    def create(
        cls, path: Path, *, name: str, config: dict[str, Any], baseline: str, cells: list[SweepCellEntry]
    ) -> SweepStore:
        store = cls(path)
        if cls.exists(path):
            raise StoreError(f"{path} already holds a sweep; continue it with --resume, or choose another -o")
        try:
            store.runs_root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create sweep directory {path}: {exc.strerror}") from exc
        store.write(SweepIndexRecord(name=name, config=redact(config), baseline=baseline, cells=cells))
        return store

    @classmethod
    def open(cls, path: Path) -> SweepStore:
        if not cls.exists(path):
            raise StoreError(f"{path} is not a sweep directory (no {SWEEP_INDEX})")
        return cls(path)

    def read(self) -> SweepIndexRecord:
        file = self.path / SWEEP_INDEX
        try:
            return SweepIndexRecord.model_validate(json.loads(file.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError, ValidationError) as exc:
            raise StoreError(f"{file} is not a valid sweep index: {exc}") from exc

    def write(self, index: SweepIndexRecord) -> None:
        index = index.model_copy(update={"updated": utc_now()})
        write_json_atomic(self.path / SWEEP_INDEX, index.model_dump(mode="json"))

    def record_run(self, run_id: str, status: str) -> None:
        index = self.read()
        index.entry(run_id).status = status
        self.write(index)

    def set_status(self, status: str) -> None:
        index = self.read()
        index.status = status  # type: ignore[assignment]
        self.write(index)

    def run_path(self, run_id: str) -> Path:
        return self.runs_root / run_id

    def existing_run(self, run_id: str) -> RunStore | None:
        """The run's store when its directory holds a manifest. A directory without one is what a kill between
        creating the folder and writing its manifest leaves: nothing was recorded in it, so it is removed and the
        run is created again (it would otherwise block that run id forever)."""
        path = self.run_path(run_id)
        if (path / MANIFEST).is_file():
            return RunStore.open(path)
        if path.is_dir():
            leftovers = [p for p in path.iterdir() if not p.name.startswith(f".{MANIFEST}.")]
            if leftovers:
                raise StoreError(f"{path} has files but no {MANIFEST}; move it away to redo this run")
            for tmp in path.iterdir():
                tmp.unlink()
            path.rmdir()
        return None

    def write_tables(self, tables: dict[str, Any], csv_files: dict[str, str]) -> list[Path]:
        """tables.json and one CSV per table (name -> text), each replaced atomically."""
        from .run import write_text_atomic

        written = [self.path / TABLES]
        write_json_atomic(self.path / TABLES, tables)
        for name, text in csv_files.items():
            write_text_atomic(self.path / name, text)
            written.append(self.path / name)
        return written
