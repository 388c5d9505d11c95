from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ._base import Section

SINGLE_TURN_METRICS = ("faithfulness", "context_precision", "context_recall", "correctness")
MULTI_TURN_METRICS = ("forgetfulness", "context_retention")


class EvaluationConfig(Section):
    """Which metrics the judge computes."""

    metrics: list[str] = Field(default_factory=lambda: [*SINGLE_TURN_METRICS, *MULTI_TURN_METRICS])
    """Metric names."""
    concurrency: int = Field(default=4, ge=1)
    """Judge calls in flight."""
    engine: Literal["ragdive", "ragas"] = "ragdive"
    """ragdive: our own judge prompts (batched, fewer calls); ragas: the four single-turn metrics through the
    Ragas library (extra `ragas`), for comparability with published numbers."""

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        known = (*SINGLE_TURN_METRICS, *MULTI_TURN_METRICS)
        unknown = [m for m in value if m not in known]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(known)}")
        if not value:
            raise ValueError("name at least one metric")
        return list(dict.fromkeys(value))
