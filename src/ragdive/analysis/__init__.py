"""Statistics over scores: summaries, repeated runs, clustered bootstrap CIs, comparisons between configurations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..importing import lazy_names

if TYPE_CHECKING:
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

# Each name is imported from its module on first use: `ragdive run` needs the summary and the alarms (and the
# bootstrap they use), not the comparisons, calibration, annotations, human agreement or repeats (~15 ms of its
# start-up, before its first request).
_HOMES = {
    "alarms": ("alarm_limits", "validity_alarms"),
    "annotations": ("AnnotationSummary", "summarize_annotations"),
    "bootstrap": ("cluster_bootstrap_ci", "cluster_totals"),
    "calibration": ("Calibration", "Estimate", "calibrate", "ppi_mean"),
    "compare": (
        "ARROW_THRESHOLD",
        "MetricComparison",
        "PairedResult",
        "arrow_for",
        "compare_configurations",
        "document_means",
        "paired_test",
        "relative_change",
    ),
    "human": ("Agreement", "HumanValidation", "cohen_kappa", "human_validation"),
    "repeats": ("RepeatSummary", "summarize_repeats"),
    "summary": ("MetricSummary", "RunScores", "summarize_by", "summarize_run", "summarize_scores"),
}

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


__getattr__ = lazy_names(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
