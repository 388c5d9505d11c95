"""The sweep index (sweep.json): the sweep's config, its cells (axis values) and, per cell, the runs of its repeats
and static arm with their status. The runs themselves are ordinary run directories under ``runs/``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from ._base import Record, utc_now

SWEEP_SCHEMA_VERSION = 1


class SweepRunEntry(Record):
    run_id: str
    repeat: int | Literal["static"]
    status: str = "planned"
    """planned (no directory yet), or the run manifest's status when the sweep last looked."""


class SweepCellEntry(Record):
    cell: str
    axes: dict[str, Any]
    runs: list[SweepRunEntry] = Field(default_factory=list)


class SweepIndexRecord(Record):
    schema_version: int = SWEEP_SCHEMA_VERSION
    kind: Literal["sweep"] = "sweep"
    name: str
    created: datetime = Field(default_factory=utc_now)
    updated: datetime = Field(default_factory=utc_now)
    status: Literal["created", "running", "finished", "incomplete", "failed", "interrupted", "budget_exceeded"] = (
        "created"
    )
    config: dict[str, Any] = Field(default_factory=dict)
    """The sweep config as given (secrets redacted); a resumed sweep must match it."""
    baseline: str
    cells: list[SweepCellEntry] = Field(default_factory=list)

    def entry(self, run_id: str) -> SweepRunEntry:
        for cell in self.cells:
            for run in cell.runs:
                if run.run_id == run_id:
                    return run
        raise KeyError(run_id)
