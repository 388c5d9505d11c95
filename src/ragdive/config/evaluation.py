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

    pass_thresholds: dict[str, str | list[str]] | None = None
    """What a conversation must reach to pass, for pass^k over a sweep cell's repeats (and `compare` of repeats),
    in the gate's sentences: ">= 0.8" (a conversation-level metric's value, a per-turn metric's mean over the
    conversation's turns; "per conversation" reads the same) or ">= 0.8 per turn" (every scored turn of it); an
    "in at least K of N repeats" part is the gate's, not pass^k's, and is ignored here. None: the gate's rules
    when `gate` is set, else no pass^k."""

    @field_validator("pass_thresholds")
    @classmethod
    def _readable_thresholds(cls, value: dict[str, str | list[str]] | None) -> dict[str, str | list[str]] | None:
        if value is not None:
            if not value:
                raise ValueError("name at least one metric and its threshold, or leave pass_thresholds out")
            parse_gate(value)
        return value

    @field_validator("metrics")
    @classmethod
    def _some_metrics(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("name at least one metric, or leave metrics out for all of them")
        return None if value is None else list(dict.fromkeys(value))
