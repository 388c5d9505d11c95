from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ._base import Section
from .gate import GateRule, parse_gate


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

    gate: dict[str, str | list[str]] | None = None
    """CI gate thresholds per metric (`ragdive gate`, `run --gate`): a rule such as ">= 0.9", "<= 0.2 per turn",
    ">= 0.5 per conversation" or ">= 0.9 in at least 4 of 5 repeats", or a list of them. None: no gate."""

    @field_validator("gate")
    @classmethod
    def _readable_gate(cls, value: dict[str, str | list[str]] | None) -> dict[str, str | list[str]] | None:
        if value is not None:
            if not value:
                raise ValueError("name at least one metric and its threshold, or leave gate out")
            parse_gate(value)  # a rule that cannot be read fails when the config loads, not when the gate runs
        return value

    def gate_rules(self) -> dict[str, list[GateRule]]:
        return parse_gate(self.gate) if self.gate else {}

    @field_validator("metrics")
    @classmethod
    def _some_metrics(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("name at least one metric, or leave metrics out for all of them")
        return None if value is None else list(dict.fromkeys(value))
