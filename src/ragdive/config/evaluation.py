from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ._base import Section


class EvaluationConfig(Section):
    """Which metrics the judge computes."""

    metrics: list[str] | None = None
    """Metric names; none given: every registered metric. Names are checked against the metric registry
    (evaluation/metrics) when the evaluator is built, before any model is called."""
    concurrency: int = Field(default=64, ge=1)
    """Judge calls in flight (within the judge model's own `max_concurrency`, shared with any other role on the
    same model and endpoint). 64 keeps a hosted API's default capacity busy; lower it for a local judge."""
    engine: Literal["ragdive", "ragas"] = "ragdive"
    """ragdive: our own judge prompts (batched, fewer calls); ragas: the four single-turn metrics through the
    Ragas library (extra `ragas`), for comparability with published numbers."""

    @field_validator("metrics")
    @classmethod
    def _some_metrics(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("name at least one metric, or leave metrics out for all of them")
        return None if value is None else list(dict.fromkeys(value))
