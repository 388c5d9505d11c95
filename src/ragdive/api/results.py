"""What the API's use cases return: typed results read back from the run directory, never printed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..notebook import ComparisonView, RunResultView, SweepResultView
from ..records import Totals
from ..store import RunStore

if TYPE_CHECKING:
    from ..analysis import RunScores
    from ..evaluation import EvaluationResult
    from ..evaluation import EvaluationResult as ScoringResult  # what a scoring pass did
else:
    ScoringResult = Any


@dataclass(frozen=True)
class MetricResult:
    """One metric over a run: the mean of the scored items (unscored ones are not in it) and its 95 % CI."""

    metric: str
    mean: float | None
    ci: tuple[float, float] | None
    n_scored: int
    n_unscored: int


@dataclass(frozen=True, repr=False)
class RunResult(RunResultView):
    run_dir: Path
    run_id: str
    status: str
    """finished, budget_exceeded, failed, interrupted (as in the manifest)."""
    totals: Totals
    metrics: dict[str, MetricResult] = field(default_factory=dict)
    """Per metric, in the run's order; empty for a run that was not scored."""
    error: str | None = None
    scoring: EvaluationResult | None = None
    """What this call's scoring did (scores written, unscored, skipped, judge calls); None when it did not score."""
    metric_names: list[str] = field(default_factory=list)
    """The score names this call scored, in the run's order (as written to evaluations.jsonl)."""
    sent: int | None = None
    """`static`: questions asked; `replay`: conversations replayed (this call)."""
    target_errors: int | None = None
    """Of those, how many the target failed to answer."""
    source_dir: Path | None = None
    """`replay`: the run whose user messages were sent."""
    scores: RunScores | None = field(default=None, repr=False, compare=False)
    """The run's scores as read for ``metrics`` (a display reuses them: the files are parsed once)."""


@dataclass(frozen=True, repr=False)
class Comparison(ComparisonView):
    """One candidate configuration against the baseline (see `ragdive compare`)."""

    baseline: str
    candidate: str
    metrics: list[Any]
    """ragdive.analysis.MetricComparison per metric: means, band, change, paired test."""


@dataclass(frozen=True, repr=False)
class SweepResult(SweepResultView):
    sweep_dir: Path
    status: str
    """finished, or failed / budget_exceeded when a run did not finish (the others are kept)."""
    runs: dict[str, str]
    """Run id -> status; the run directories are ``sweep_dir / "runs" / run_id``."""
    tables: dict[str, Any]
    """Tables 2, 4 (and 5) as in the sweep's tables.json."""
    errors: dict[str, str] = field(default_factory=dict)
    table_files: list[Path] = field(default_factory=list)
    """tables.json and the tables' CSV files, as written."""


def lower_is_better() -> frozenset[str]:
    """The metrics whose lower values are better (forgetfulness...), from the metric registry. Here, beside the
    results it reads, not in `serving` (which imports the reference RAG's server: ~0.05 s at the end of a run)."""
    from ..evaluation.metrics import LOWER_IS_BETTER

    return frozenset(LOWER_IS_BETTER)


def run_result(
    store: RunStore,
    metrics: Sequence[str] | None,
    error: str | None = None,
    **details: Any,
) -> RunResult:
    """The run as its manifest and files say now, summarised over ``metrics`` (None: not scored by this call)."""
    manifest = store.read_manifest()
    summary: dict[str, MetricResult] = {}
    scores = None
    if metrics:
        from ..analysis import RunScores, summarize_run  # numpy: only once there is something to sum

        scores = RunScores.from_store(store)
        for s in summarize_run(scores, list(metrics)):
            summary[s.metric] = MetricResult(s.metric, s.mean, s.ci, s.n_scored, s.n_unscored)
    return RunResult(
        store.path,
        manifest.run_id,
        manifest.status,
        manifest.totals,
        summary,
        error or manifest.error,
        metric_names=list(metrics or []),
        scores=scores,
        **details,
    )
