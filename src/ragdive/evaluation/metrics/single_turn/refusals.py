"""Refusals: did the answer decline, or say the knowledge base has no answer? One judge call per turn (``refused``)
and three figures read from it, each a per-turn score so that the run mean, its CI clustered by conversation, the
per-turn-index table, compare and the sweep tables need nothing of their own:

- ``refusal_recall``: on unanswerable probes, 1 if the system refused (mean = share of probes refused).
- ``refusal_precision``: on refused turns, 1 if the turn was a probe (mean = share of refusals that were right).
- ``over_refusal``: on answerable turns, 1 if the system refused (mean = over-refusal rate; lower is better).

Each is unscored, with the reason, on the turns it does not count (an answerable turn has no refusal recall). The
probe plan (``Turn.unanswerable``, from simulation.unanswerable_rate) is the source of truth for which turns are
probes; the judge only says whether the answer refused. The four share the one judgement per turn (a memo per
judge, so naming any of them costs one call), and carry the same prompt fingerprint.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from ....records import Conversation, Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric, Unscorable
from ..registry import metric
from ..shared import shared_verdict

UNKNOWN_ANSWERABILITY = (
    "unknown whether the knowledge base answers this turn: an imported log has no probe plan "
    '(mark its user messages with "unanswerable": true or false)'
)


class RefusalVerdict(BaseModel):
    reason: str
    refused: bool


async def refusal_verdict(judge: Judge, conversation: Conversation, turn: Turn) -> RefusalVerdict:
    """The judge's one verdict on this turn's answer, shared by the four refusal metrics."""
    key = ("refused", conversation.id, turn.index, turn.answer or "")
    return await shared_verdict(
        judge, key, lambda: judge.ask("refused", RefusalVerdict, question=turn.rag_input, answer=turn.answer)
    )


class _RefusalFigure(TurnMetric):
    needs_contexts = False

    counts: ClassVar[str]
    """Which turns the figure counts: every answered one, probes, answerable ones, or the refused ones."""

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        return await self.measure_in(judge, Conversation(id="", persona="", document_ids=[], seed=0), turn)

    async def measure_in(self, judge: Judge, conversation: Conversation, turn: Turn) -> Outcome:
        if self.counts != "answered" and (conversation.model_extra or {}).get("answerability") == "unknown":
            raise Unscorable(UNKNOWN_ANSWERABILITY)
        if self.counts == "probes" and not turn.unanswerable:
            raise Unscorable("answerable turn: refusal recall counts the unanswerable probes only")
        if self.counts == "answerable" and turn.unanswerable:
            raise Unscorable("unanswerable probe: over-refusal counts the answerable turns only")
        verdict = await refusal_verdict(judge, conversation, turn)
        said = f"{'refused' if verdict.refused else 'answered'}: {verdict.reason}"
        details = {"refused": verdict.refused, "probe": turn.unanswerable}
        if self.counts == "refused":
            if not verdict.refused:
                raise Unscorable("the answer did not refuse: refusal precision counts refusals only")
            kind = "a probe" if turn.unanswerable else "an answerable turn"
            return Outcome(1.0 if turn.unanswerable else 0.0, f"{kind}, {said}", details)
        return Outcome(1.0 if verdict.refused else 0.0, said, details)


@metric("refused", kind="turn", inputs=("question", "answer"), direction="lower", prompt="refused", default=False)
class Refused(_RefusalFigure):
    """1 when the answer declined or said the knowledge base has no answer. "lower" only orders tables: whether a
    refusal was right is what the three figures below say."""

    counts = "answered"


@metric("refusal_recall", version=2, kind="turn", inputs=("question", "answer"), prompt="refused", default=False)
class RefusalRecall(_RefusalFigure):
    counts = "probes"


@metric("refusal_precision", version=2, kind="turn", inputs=("question", "answer"), prompt="refused", default=False)
class RefusalPrecision(_RefusalFigure):
    counts = "refused"


@metric(
    "over_refusal",
    version=2,
    kind="turn",
    inputs=("question", "answer"),
    direction="lower",
    prompt="refused",
    default=False,
)
class OverRefusal(_RefusalFigure):
    counts = "answerable"


REFUSAL_METRICS = ("refused", "refusal_recall", "refusal_precision", "over_refusal")
