"""What `--json` prints: one versioned schema per command, the same numbers as the terminal's tables.

Each document names its schema (``"schema_name": "ragdive.gate"``) and version (``"version": 1``); a field is added
without a new version, a field removed or changed in meaning gets one. `ragdive config output-schema COMMAND`
prints the JSON Schema of each (for a CI step that validates what it reads). Unknown values are null, never 0.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

OUTPUT_VERSION = 1


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    version: int = OUTPUT_VERSION
    """Version of this command's schema."""


class Interval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    low: float
    high: float

    @classmethod
    def of(cls, ci: tuple[float, float] | None) -> Interval | None:
        return None if ci is None else cls(low=ci[0], high=ci[1])


class MetricJson(BaseModel):
    """One metric over a run: the mean of scored items (unscored ones are not in it), its clustered 95 % CI."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    metric: str
    mean: float | None
    ci: Interval | None
    n_scored: int
    n_unscored: int
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    """Unscored items by kind of reason."""


class RunJson(Output):
    """`run --json`, `evaluate --json`, `runs show --json`: one run, its counts and its per-metric summary."""

    schema_name: Literal["ragdive.run"] = "ragdive.run"
    run_dir: str
    run_id: str
    name: str | None = None
    kind: str
    status: str
    error: str | None = None
    totals: dict[str, Any]
    """The manifest's counts, tokens and cost (`totals`)."""
    metrics: list[MetricJson] = Field(default_factory=list)
    gate: GateJson | None = None
    """`run --gate`: the gate's verdict on this run."""


class RunListJson(Output):
    """`runs list --json`: one entry per run directory in the folder."""

    schema_name: Literal["ragdive.runs"] = "ragdive.runs"
    runs: list[RunEntryJson]


class RunEntryJson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: str
    run_id: str
    name: str | None
    kind: str
    status: str
    """As `runs list` shows it: `stale` when a `running` run's process is gone."""
    created: str
    conversations: int
    turns: int
    scores: int
    unscored: int
    cost_usd: float | None


class PairedJson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n_pairs: int
    mean_diff: float | None
    ci: Interval | None
    p_value: float | None
    effect_size: float | None
    verdict: str
    paired_on: str


class MetricComparisonJson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    lower_is_better: bool
    baseline_mean: float | None
    band: Interval | None
    mean: float | None
    change: float | None
    arrow: str
    better: bool | None
    outside_band: bool
    n_scored: int
    n_unscored: int
    paired: PairedJson


class ComparisonJson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    baseline: str
    candidate: str
    metrics: list[MetricComparisonJson]


class CompareJson(Output):
    """`compare --json`: each configuration against the first."""

    schema_name: Literal["ragdive.compare"] = "ragdive.compare"
    comparisons: list[ComparisonJson]
    regressions: list[str] = Field(default_factory=list)
    """`--fail-on-regression`: "candidate: metric" for each metric that got worse outside the paired CI."""


class WorstJson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    value: float
    run_id: str


class CheckJson(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    group: str
    """The run, the repeats of one configuration, or the sweep cell checked."""
    metric: str
    rule: str
    passed: bool
    value: float | None
    ci: Interval | None
    n_scored: int
    n_unscored: int
    detail: str
    conversation_id: str | None = None
    worst: list[WorstJson] = Field(default_factory=list)


class GateJson(Output):
    """`gate --json`: the verdict and every check (the JUnit file's test cases)."""

    schema_name: Literal["ragdive.gate"] = "ragdive.gate"
    passed: bool
    checks: list[CheckJson]


class SweepCellJson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cell: str
    axes: dict[str, Any]
    runs: list[dict[str, Any]]
    """run_id, repeat, status of each of the cell's runs."""


class SweepJson(Output):
    """`sweep --json`: the sweep directory, its status, its cells and runs, and its tables (as tables.json)."""

    schema_name: Literal["ragdive.sweep"] = "ragdive.sweep"
    sweep_dir: str
    name: str
    status: str
    baseline: str
    cells: list[SweepCellJson]
    tables: dict[str, Any] = Field(default_factory=dict)


OUTPUTS: dict[str, type[Output]] = {
    "run": RunJson,
    "evaluate": RunJson,
    "runs-show": RunJson,
    "runs-list": RunListJson,
    "compare": CompareJson,
    "gate": GateJson,
    "sweep": SweepJson,
}
"""Command (``runs show`` as ``runs-show``) -> the model of what its ``--json`` prints."""

RunJson.model_rebuild()
RunListJson.model_rebuild()


def dump(document: Output) -> str:
    return document.model_dump_json(indent=2)
