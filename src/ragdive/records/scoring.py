from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field, model_validator

from ._base import Record


class Score(Record):
    """One metric value: a line of evaluations.jsonl.

    A judge that failed gives an *unscored* Score (value None, unscored_reason set). Unscored items are excluded
    from every mean and counted separately: never 0, never silently dropped.
    """

    conversation_id: str
    """Conversation scored."""
    turn_index: int | None = None
    """Turn scored; None for whole-conversation metrics."""
    metric: str
    """Metric name, e.g. faithfulness, context_precision, forgetfulness."""
    value: float | None = None
    """Score in [0, 1]; None when unscored."""
    reason: str = ""
    """Judge's explanation."""
    unscored_reason: str | None = None
    """Why no score could be given (judge failure, missing answer...)."""
    judge_model: str | None = None
    """provider/model of the judge."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Metric-specific detail: per-claim verdicts, per-context relevance, attributions."""
    metric_version: int | None = None
    """The metric's declared version when it was scored (None: written before metrics had versions)."""
    prompt_fingerprint: str | None = None
    """Hash of the metric's version and prompt files (or the outside engine's name and version), so a resumed
    run can tell scores of an edited metric from current ones."""
    conversation_finished: datetime | None = None
    """When the conversation line this score judged was finished (scores are written only after that line, also
    those judged while the conversation was still going on). A resumed run redoes a conversation that failed
    (status error); a score of its earlier line is then stale, and readers and the evaluator drop it."""

    @model_validator(mode="after")
    def _value_xor_unscored(self) -> Score:
        if (self.value is None) == (self.unscored_reason is None):
            raise ValueError("a Score has either a value or an unscored_reason, not both and not neither")
        return self

    @property
    def scored(self) -> bool:
        return self.value is not None

    @classmethod
    def unscored(cls, *, conversation_id: str, metric: str, reason: str, **kw: Any) -> Score:
        return cls(conversation_id=conversation_id, metric=metric, unscored_reason=reason, **kw)
