from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from pydantic import Field, model_validator

from ._base import Record

UNSCORED_KINDS: Final[dict[str, str]] = {
    "judge_failed": "the judge's model call failed (worth --retry-failed)",
    "judge_unusable": "the judge answered, but not in the shape asked for, or an answer that cannot be right",
    "unanswerable_probe": "a deliberate probe the knowledge base does not answer: nothing relevant to measure",
    "no_answer": "the target failed on the turn: no answer to judge",
    "no_contexts": "the target reported no retrieved contexts",
    "no_ground_truth": "the turn's ground truth is empty or unknown: nothing to judge against",
    "nothing_to_measure": "the input held nothing to measure (no claims, no statements)",
    "too_short": "a conversation of fewer than two answered turns",
    "source_missing": "an imported run's source tool gave no value here",
    "undecidable": "the judge said the inputs it was shown cannot decide the criterion (a rubric metric's inputs)",
    "other": "a reason recorded before unscored scores had kinds, not recognised",
}
"""The stable codes of why a score is missing (``Score.unscored_kind``): summaries, the report and exports group
by them; the free text stays in ``unscored_reason`` for the drill-down. Codes are never renamed (readers and
users' scripts match on them); a new case gets a new code."""


JUDGE_FAILURES: Final = frozenset({"judge_failed", "judge_unusable"})
"""The kinds that are the judge failing (worth --retry-failed), as opposed to nothing to measure."""


def kind_of_unscored(score: Score) -> str | None:
    """The kind of an unscored score (None for a scored one); lines written before kinds existed are classified
    from their recorded reason and details, once, here."""
    if score.value is not None:
        return None
    return unscored_kind_from(score.unscored_kind, score.unscored_reason, bool(score.details.get("judge_failed")))


def unscored_kind_from(kind: str | None, reason: str | None, judge_failed: bool) -> str:
    """An unscored line's kind from its fields (kind_of_unscored; a counter that reads only these fields)."""
    return kind or _classify(reason or "", judge_failed)


def _classify(reason: str, judge_failed: bool) -> str:
    text = reason.lower()
    rules = (
        ("judge output unusable", "judge_unusable"),
        ("judge returned", "judge_unusable"),
        ("judge gave verdicts", "judge_unusable"),
        ("judge call failed", "judge_failed"),
        ("judge failed", "judge_failed"),
        ("unanswerable probe", "unanswerable_probe"),
        ("no answer", "no_answer"),
        ("no retrieved contexts", "no_contexts"),
        ("ground truth", "no_ground_truth"),
        ("source has no value", "source_missing"),
        ("fewer than two", "too_short"),
    )
    for needle, kind in rules:
        if needle in text:
            return kind
    return "judge_failed" if judge_failed else "other"


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
    unscored_kind: str | None = None
    """The stable code of why (a key of UNSCORED_KINDS) when unscored; None when scored, and in lines written
    before kinds existed (read them with ``kind_of_unscored``)."""
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
    def unscored(cls, *, conversation_id: str, metric: str, reason: str, kind: str | None = None, **kw: Any) -> Score:
        """An unscored Score; ``kind`` should be given (a caller that does not know it gets it classified from
        the reason, as an old line would be)."""
        if kind is None:
            kind = _classify(reason, bool(kw.get("details", {}).get("judge_failed")))
        if kind not in UNSCORED_KINDS:
            raise ValueError(f"unscored kind {kind!r} is not one of {', '.join(UNSCORED_KINDS)}")
        return cls(conversation_id=conversation_id, metric=metric, unscored_reason=reason, unscored_kind=kind, **kw)
