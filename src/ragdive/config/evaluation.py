from __future__ import annotations

from pydantic import Field

from ._base import Section

SINGLE_TURN_METRICS = ("faithfulness", "context_precision", "context_recall", "correctness")
MULTI_TURN_METRICS = ("forgetfulness", "context_retention")


class EvaluationConfig(Section):
    """Which metrics the judge computes."""

    metrics: list[str] = Field(default_factory=lambda: [*SINGLE_TURN_METRICS, *MULTI_TURN_METRICS])
    """Metric names."""
    concurrency: int = Field(default=4, ge=1)
    """Judge calls in flight."""
