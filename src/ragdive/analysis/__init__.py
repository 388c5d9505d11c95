"""Statistics over scores: summaries, repeated runs, clustered bootstrap CIs, comparisons between configurations."""

from .bootstrap import cluster_bootstrap_ci, cluster_totals
from .compare import (
    ARROW_THRESHOLD,
    MetricComparison,
    PairedResult,
    arrow_for,
    compare_configurations,
    document_means,
    paired_test,
    relative_change,
)
from .repeats import RepeatSummary, summarize_repeats
from .summary import MetricSummary, RunScores, summarize_by, summarize_run, summarize_scores

__all__ = [
    "ARROW_THRESHOLD",
    "MetricComparison",
    "MetricSummary",
    "PairedResult",
    "RepeatSummary",
    "RunScores",
    "arrow_for",
    "cluster_bootstrap_ci",
    "cluster_totals",
    "compare_configurations",
    "document_means",
    "paired_test",
    "relative_change",
    "summarize_by",
    "summarize_repeats",
    "summarize_run",
    "summarize_scores",
]
