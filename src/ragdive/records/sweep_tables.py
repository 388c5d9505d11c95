"""The shape of a sweep's tables.json: the sweep command builds it (analysis/) and checks it against these models before
writing; the sweep report parses it with them. One schema, both sides.

Tables 2, 4 and 5 are the paper's: Table 2 the baseline cell's repeats (mean, std, min, max, and here a CI),
Table 4 each cell's mean against the baseline's min-max band over its repeats (`*` outside it), Table 5 the
dynamic (simulated) and static scores per cell, each with its arrow for a large change from the baseline cell's
value of the same method (as the paper marks its DIVE and SQuAD columns each on its own). The numbers are
computed by the sweep command (analysis/); the report only shows them. null is "unknown" and is shown as "-".

Unknown extra fields are kept and ignored (a newer sweep may say more); a missing or mistyped field is one
readable error naming it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..config.loader import format_validation_error
from ..errors import StoreError


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class MetricInfo(_Record):
    name: str
    direction: Literal["higher", "lower"] | None = None


def _plain_run_id(run: str) -> str:
    # a run id names a folder under runs/: never a path that leaves the sweep directory
    if not run or "/" in run or "\\" in run or run in (".", ".."):
        raise ValueError(f"{run!r} is not a run id")
    return run


class CellInfo(_Record):
    cell: str
    axes: dict[str, Any] = {}
    runs: list[str] = []
    """The cell's dynamic runs, one per repeat."""
    static_run: str | None = None
    """The cell's static-arm run, when the sweep had one."""

    @field_validator("runs")
    @classmethod
    def _plain_run_ids(cls, runs: list[str]) -> list[str]:
        return [_plain_run_id(r) for r in runs]

    @field_validator("static_run")
    @classmethod
    def _plain_static_run_id(cls, run: str | None) -> str | None:
        return None if run is None else _plain_run_id(run)


class Table2Row(_Record):
    metric: str
    n: int | None = None
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


class Table2(_Record):
    cell: str
    repeats: int | None = None
    rows: list[Table2Row]


class Table4Row(_Record):
    cell: str
    metric: str
    mean: float | None = None
    band_min: float | None = None
    band_max: float | None = None
    outside_band: bool | None = None


class Table4(_Record):
    rows: list[Table4Row]
    baseline_repeats: int | None = None
    """Finished repeats of the baseline cell: under 2 there is no band at all (the footnote says so)."""
    rule: str | None = None
    """How `*` was decided (tolerance, rounded or not), as the footnote states it."""


class Table5Row(_Record):
    cell: str
    metric: str
    dynamic: float | None = None
    static: float | None = None
    arrow: Literal["↑", "↓", ""] | None = None
    """The dynamic value against the baseline cell's dynamic value."""
    better: bool | None = None
    static_arrow: Literal["↑", "↓", ""] | None = None
    """The static value against the baseline cell's static value (the paper marks each column on its own)."""
    static_better: bool | None = None


class Table5(_Record):
    rows: list[Table5Row]


class PassKRow(_Record):
    cell: str
    k: int
    value: float | None = None
    """Share of seed documents whose conversation passed in all of k repeats (τ-bench's estimator)."""
    n_documents: int | None = None
    undetermined: int | None = None
    """(document, repeat) outcomes left out: a threshold's metric was unscored there."""


class PassKTable(_Record):
    thresholds: list[str]
    rows: list[PassKRow]


class SweepTables(_Record):
    sweep: str
    baseline: str
    arrow_rule: str | None = None
    metrics: list[MetricInfo]
    cells: list[CellInfo]
    table2: Table2
    table4: Table4
    table5: Table5 | None = None  # only when the sweep had a static arm
    pass_k: PassKTable | None = None  # only when pass thresholds (or the CI gate's) are configured


def parse_tables(data: dict[str, Any], source: str) -> SweepTables:
    try:
        return SweepTables.model_validate(data)
    except ValidationError as exc:  # one line, naming each wrong field
        problems = "; ".join(line.removeprefix(": ") for line in format_validation_error(exc, "").splitlines())
        raise StoreError(f"{source} is not a sweep's tables: {problems}") from exc
