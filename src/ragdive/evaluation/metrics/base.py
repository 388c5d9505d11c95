"""What every metric shares: the unscored policy, written once.

A metric either returns a value with the judge's reason, or an *unscored* Score whose reason says why (the target
failed, nothing to measure, the judge failed). Unscored results are excluded from every mean and counted.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from ...errors import ConfigError, JudgeError
from ...records import Conversation, Score, Turn
from ..judging import JudgeProtocol
from .registry import MetricInfo, metric_info

NO_GROUND_TRUTH = "no ground truth: the turn has no reference answer (an imported log), so this metric cannot be judged"
UNANSWERABLE_NOTE = "unanswerable probe: the knowledge base has no answer, so there is no relevant context"
NO_GROUND_TRUTH_NOTE = NO_GROUND_TRUTH

Unscored = tuple[str, str]
"""(kind, reason) of an unscored result: a key of records.UNSCORED_KINDS and the free text."""


class Unscorable(Exception):
    """The input gives nothing to measure (zero claims, zero statements): unscored, never 1 or 0.
    ``judge_failed`` marks the judge failing (the Ragas engine, or an answer that cannot be right) so it can be
    retried with --retry-failed."""

    def __init__(self, message: str, *, judge_failed: bool = False, kind: str | None = None) -> None:
        super().__init__(message)
        self.judge_failed = judge_failed
        self.kind = kind or ("judge_unusable" if judge_failed else "nothing_to_measure")


JUDGE_FAILED = "judge_failed"
"""Key in an unscored Score's details: the judge failed (worth retrying), as opposed to nothing to measure."""


def _failure_details(exc: Exception) -> dict[str, Any]:
    failed = isinstance(exc, JudgeError) or getattr(exc, "judge_failed", False)
    return {JUDGE_FAILED: True} if failed else {}


def _failure_kind(exc: Exception) -> str:
    if isinstance(exc, JudgeError):
        return exc.kind
    return getattr(exc, "kind", "nothing_to_measure")


@dataclass
class Outcome:
    value: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


def numbered_contexts(turn: Turn) -> list[dict[str, Any]]:
    """Contexts as the prompts show them: 1-based rank, text, source."""
    return [{"rank": i, "text": c.text, "source": c.source or c.id or ""} for i, c in enumerate(turn.contexts, 1)]


JudgeT = TypeVar("JudgeT", bound=JudgeProtocol)
"""The judge a metric asks: ragdive's metrics ask the `Judge` (unparameterised `TurnMetric` means any), the Ragas
engine's ask its own RagasJudge."""


class TurnMetric(ABC, Generic[JudgeT]):
    """A single-turn metric: judges one turn (stand-alone question, ground truth, answer, contexts)."""

    name: ClassVar[str]
    needs_answer: ClassVar[bool] = True
    needs_contexts: ClassVar[bool] = True
    needs_answerable: ClassVar[bool] = False
    """Unscored on unanswerable probes (their ground truth is "not in the knowledge base")."""
    needs_ground_truth: ClassVar[bool] = False
    """Judged against the ground truth: unscored (no_ground_truth) when it is empty or unknown (an imported run
    whose source had no per-turn reference), never compared with nothing and found "all present"."""

    def identity(self) -> dict[str, Any]:
        return identity(self.name)

    def precheck(self, turn: Turn) -> Unscored | None:
        """Why this turn cannot be scored before asking the judge (kind, reason), or None."""
        if turn.answer is None and (self.needs_answer or not turn.contexts):
            return "no_answer", f"no answer: the target failed on this turn ({turn.error or 'no error recorded'})"
        if self.needs_answerable and turn.unanswerable:
            return "unanswerable_probe", UNANSWERABLE_NOTE
        if not (turn.ground_truth or "").strip() and (self.needs_ground_truth or self._reads_ground_truth()):
            return "no_ground_truth", NO_GROUND_TRUTH
        if self.needs_contexts and not turn.contexts:
            return "no_contexts", "the target reported no retrieved contexts"
        return None

    def _reads_ground_truth(self) -> bool:
        try:
            return "ground_truth" in metric_info(self.name).inputs
        except ConfigError:  # an outside engine's metric, not in the registry: it checks its own inputs
            return False

    @abstractmethod
    async def measure(self, judge: JudgeT, turn: Turn) -> Outcome:
        """Ask the judge and compute the value. Raise Unscorable when there is nothing to measure."""

    async def measure_in(self, judge: JudgeT, conversation: Conversation, turn: Turn) -> Outcome:
        """``measure`` for a metric that reads only its turn; one that reads the turns before it (faithfulness in
        conversation) or the conversation's identity (refusals share one judgement per turn) overrides this."""
        return await self.measure(judge, turn)

    async def score(self, judge: JudgeT, conversation: Conversation, turn: Turn) -> Score:
        common = {"conversation_id": conversation.id, "turn_index": turn.index, **self.identity()}
        return await _judged_score(
            judge, common, self.precheck(turn), lambda: self.measure_in(judge, conversation, turn)
        )


class ConversationMetric(ABC, Generic[JudgeT]):
    """A multi-turn metric: judges the whole conversation (rag_input and answer of every turn)."""

    name: ClassVar[str]

    def identity(self) -> dict[str, Any]:
        return identity(self.name)

    def precheck(self, conversation: Conversation) -> Unscored | None:
        answered = [t for t in conversation.turns if t.answer is not None]
        if len(conversation.turns) < 2:
            return "too_short", "a conversation of fewer than two turns has no earlier context to keep or lose"
        if len(answered) < 2:
            return "too_short", "fewer than two turns were answered (the target failed on the others)"
        return None

    @abstractmethod
    async def measure(self, judge: JudgeT, conversation: Conversation) -> Outcome:
        """Ask the judge and compute the value."""

    async def score(self, judge: JudgeT, conversation: Conversation) -> Score:
        common = {"conversation_id": conversation.id, "turn_index": None, **self.identity()}
        return await _judged_score(
            judge, common, self.precheck(conversation), lambda: self.measure(judge, conversation)
        )


def identity(name: str) -> dict[str, Any]:
    """The Score fields naming a metric: name, declared version and prompt fingerprint (from the registry)."""
    info = metric_info(name)
    return {"metric": name, "metric_version": info.version, "prompt_fingerprint": fingerprint(info)}


@functools.cache
def fingerprint(info: MetricInfo) -> str:
    return info.fingerprint()  # reads the prompt files once per process


async def _judged_score(
    judge: JudgeProtocol, common: dict[str, Any], precheck: Unscored | None, measure: Callable[[], Awaitable[Outcome]]
) -> Score:
    """A value when the judge could measure; otherwise unscored with its kind and reason (a precheck, a judge
    failure, nothing to measure) — never a 0 standing in for a failure."""
    unscored, details = precheck, dict[str, Any]()
    if unscored is None:
        try:
            outcome = await measure()
        except (JudgeError, Unscorable) as exc:
            unscored, details = (_failure_kind(exc), str(exc)), _failure_details(exc)
    if unscored is not None:
        kind, reason = unscored
        return Score.unscored(reason=reason, kind=kind, judge_model=judge.name, details=details, **common)
    return Score(value=outcome.value, reason=outcome.reason, judge_model=judge.name, details=outcome.details, **common)


def share_true(flags: list[bool], *, if_empty: str, judge_failed: bool = False) -> float:
    """The share of True verdicts (faithfulness, context recall). Nothing to judge is Unscorable, never 0 or 1."""
    if not flags:
        raise Unscorable(if_empty, judge_failed=judge_failed)
    return sum(flags) / len(flags)
