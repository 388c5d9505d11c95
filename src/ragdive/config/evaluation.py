from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from ._base import Section
from .alarms import AlarmsConfig
from .gate import GateRule, parse_gate

RubricInput = Literal["question", "standalone_question", "ground_truth", "answer", "contexts", "conversation"]


class CustomMetricConfig(Section):
    """A rubric metric declared in YAML: the judge reads the inputs named here and rates one criterion. Judged like
    the built-in metrics (reason first, unscored when the judge fails, cached, fingerprinted, in every table,
    report and export); the prompt is the file evaluation/prompts/rubric.md with this criterion in it."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{1,47}$")
    """The metric's name in tables and exports (lower case, digits, underscores); must not be a built-in's."""
    level: Literal["turn", "conversation"] = "turn"
    """turn: one score per turn; conversation: one score for the whole conversation."""
    inputs: list[RubricInput] = Field(default_factory=lambda: ["question", "answer"])  # type: ignore[arg-type]
    """What the judge sees: question (the user's message as sent), standalone_question (its self-contained
    rewrite), ground_truth, answer, contexts (the retrieved passages), conversation (for a turn: the turns before
    it; a conversation-level metric always sees every turn's message and answer, plus any of the others named)."""
    criterion: str = Field(min_length=10)
    """What is judged, in plain words: e.g. "The answer says which document each fact comes from"."""
    scale: Literal["yes_no", "1-5"] = "yes_no"
    """yes_no: 1 for yes, 0 for no; 1-5: a rating mapped to [0, 1] as (rating - 1) / 4."""
    direction: Literal["higher", "lower"] = "higher"
    """Which way is better (lower: the criterion describes a fault, e.g. "the answer is rude")."""
    version: int = Field(default=1, ge=1)
    """Bump it when you change the criterion's meaning: scores of an older version are told apart (and
    `evaluate --rescore-changed` scores them again). The fingerprint follows the criterion text by itself."""

    @model_validator(mode="after")
    def _inputs(self) -> CustomMetricConfig:
        if not self.inputs:
            raise ValueError("name at least one input")
        self.inputs = list(dict.fromkeys(self.inputs))
        if self.level == "turn" and not set(self.inputs) - {"conversation"}:
            raise ValueError("a turn-level metric needs an input of the turn (question, answer, ...)")
        return self


class EvaluationConfig(Section):
    """Which metrics the judge computes."""

    metrics: list[str] | None = None
    """Metric names; none given: the paper's built-in metrics plus every custom metric below. Names are checked
    against the metric registry (evaluation/metrics) when the evaluator is built, before any model is called."""
    custom_metrics: list[CustomMetricConfig] = Field(default_factory=list)
    """Rubric metrics declared here, judged like the built-ins (see CustomMetricConfig)."""
    concurrency: int = Field(default=64, ge=1)
    """Judge calls in flight (within the judge model's own `max_concurrency`, shared with any other role on the
    same model and endpoint). 64 keeps a hosted API's default capacity busy; lower it for a local judge."""
    engine: Literal["ragdive", "ragas"] = "ragdive"
    """ragdive: our own judge prompts (batched, fewer calls); ragas: the four single-turn metrics through the
    Ragas library (extra `ragas`), for comparability with published numbers."""

    alarms: AlarmsConfig = Field(default_factory=AlarmsConfig)
    """Validity alarms: thresholds past which the run's numbers would mislead (printed after the summary, at the
    top of the report, in the manifest)."""

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

    @field_validator("custom_metrics")
    @classmethod
    def _distinct(cls, value: list[CustomMetricConfig]) -> list[CustomMetricConfig]:
        names = [m.name for m in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"custom metric(s) declared twice: {', '.join(twice)}")
        return value
