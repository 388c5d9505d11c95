"""Statistics over scores: summaries, repeated runs, clustered bootstrap CIs, comparisons between configurations."""

from .alarms import alarm_limits, validity_alarms
from .annotations import AnnotationSummary, summarize_annotations
from .bootstrap import cluster_bootstrap_ci, cluster_totals
from .calibration import Calibration, Estimate, calibrate, ppi_mean
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
from .human import Agreement, HumanValidation, cohen_kappa, human_validation
from .repeats import RepeatSummary, summarize_repeats
from .summary import MetricSummary, RunScores, summarize_by, summarize_run, summarize_scores

__all__ = [
    "alarm_limits",
    "validity_alarms",
    "Agreement",
    "AnnotationSummary",
    "Calibration",
    "Estimate",
    "HumanValidation",
    "calibrate",
    "cohen_kappa",
    "human_validation",
    "ppi_mean",
    "summarize_annotations",
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
