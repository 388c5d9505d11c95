"""What the sweep report reads from a sweep directory (docs/architecture.md, "The run directory": sweeps/<sweep-id>/)
and the one file it writes there, report.html. The sweep's own files (sweep.json, tables.json, the runs) are written
by the sweep command; this module only reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .liveness import shown_status
from .run import MANIFEST, REPORT, RunStore, write_text_atomic

SWEEP_INDEX = "sweep.json"
TABLES = "tables.json"
RUNS = "runs"


def is_sweep_dir(path: Path) -> bool:
    """A sweep directory has a sweep index or its tables, and is not itself a run."""
    path = Path(path)
    return (
        path.is_dir()
        and not (path / MANIFEST).is_file()
        and ((path / SWEEP_INDEX).is_file() or (path / TABLES).is_file())
    )


class SweepFiles:
    """A sweep directory as the report sees it: its tables, its runs' reports, its own report.html."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def open(cls, path: Path) -> SweepFiles:
        path = Path(path)
        if not path.is_dir():
            raise StoreError(f"no sweep directory at {path}")
        if not (path / TABLES).is_file():
            hint = " (the sweep has not finished its tables yet)" if (path / SWEEP_INDEX).is_file() else ""
            raise StoreError(f"{path} has no {TABLES}{hint}")
        return cls(path)

    @property
    def tables_path(self) -> Path:
        return self.path / TABLES

    @property
    def report_path(self) -> Path:
        return self.path / REPORT

    def read_tables(self) -> dict[str, Any]:
        """tables.json as written by the sweep command (its shape is checked by the report, which renders it)."""
        try:
            data = json.loads(self.tables_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise StoreError(f"{self.tables_path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise StoreError(f"{self.tables_path} is not a sweep's tables: not a JSON object")
        return data

    def run_path(self, run_id: str) -> Path:
        return self.path / RUNS / run_id

    def run_report(self, run_id: str) -> Path | None:
        """The run's report.html when it was written, else None."""
        report = self.run_path(run_id) / REPORT
        return report if report.is_file() else None

    def run_state(self, run_id: str) -> tuple[RunStore | None, str]:
        """The run's store (None when there is nothing readable) and what a person should know about it: its
        shown status (``stale`` when its process is gone), ``not started`` without a run directory,
        ``unreadable`` when its manifest is not one."""
        path = self.run_path(run_id)
        if not (path / MANIFEST).is_file():
            return None, "not started"
        store = RunStore(path)
        try:
            return store, shown_status(store.read_manifest())
        except StoreError:
            return None, "unreadable"

    def write_report(self, html: str) -> Path:
        """The sweep's report.html, replaced atomically (a reader never sees half a report)."""
        write_text_atomic(self.report_path, html)
        return self.report_path
