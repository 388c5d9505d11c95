"""Faithfulness in conversation: claims of the answer supported by this turn's contexts, by an earlier turn's
contexts or by an earlier answer, ÷ claims.

Standard faithfulness checks an answer against this turn's contexts only, so a turn-2 answer that correctly
restates what turn 1 retrieved scores 0 there. Here the judge places each claim's support (this turn, an earlier
turn's contexts, an earlier answer, or nothing), the first three count as supported, and the reason says which;
``details.history_only_share`` is the share of claims supported only by the history. An earlier answer counts as
support as given (whether *it* was faithful is that turn's score). An answer with no claim is unscored, as for
faithfulness.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel

from ....records import Conversation, Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric, numbered_contexts, share_true
from ..registry import metric

Support = Literal["current_contexts", "earlier_contexts", "earlier_answer", "none"]
SUPPORTED: tuple[Support, ...] = ("current_contexts", "earlier_contexts", "earlier_answer")
HISTORY: tuple[Support, ...] = ("earlier_contexts", "earlier_answer")


class PlacedClaim(BaseModel):
    claim: str
    reason: str = ""
    support: Support
    turn: int | None = None
    """The earlier turn (numbered as shown) whose contexts or answer support the claim."""


class ConversationFaithfulnessVerdict(BaseModel):
    claims: list[PlacedClaim]
    """Required: an answer without this list is the wrong shape (a judge failure), never "nothing to judge"."""


def earlier_turns(conversation: Conversation, turn: Turn) -> list[dict[str, Any]]:
    """The turns before ``turn`` as the prompt shows them: numbered from 1, question, answer, contexts."""
    return [
        {
            "number": t.index + 1,
            "rag_input": t.rag_input,
            "answer": t.answer if t.answer is not None else "(no answer: the system failed)",
            "contexts": numbered_contexts(t),
        }
        for t in sorted(conversation.turns, key=lambda t: t.index)
        if t.index < turn.index
    ]


@metric(
    "faithfulness_in_conversation",
    kind="turn",
    inputs=("question", "answer", "contexts", "conversation"),
    default=False,
)
class FaithfulnessInConversation(TurnMetric):
    needs_contexts = False  # a turn that retrieved nothing may still restate what an earlier turn retrieved

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        """Without a conversation (a single-turn static item) there is no history: faithfulness's question."""
        return await self._judge(judge, turn, [])

    async def measure_in(self, judge: Judge, conversation: Conversation, turn: Turn) -> Outcome:
        return await self._judge(judge, turn, earlier_turns(conversation, turn))

    async def _judge(self, judge: Judge, turn: Turn, history: list[dict[str, Any]]) -> Outcome:
        verdict = await judge.ask(
            "faithfulness_in_conversation",
            ConversationFaithfulnessVerdict,
            question=turn.rag_input,
            answer=turn.answer,
            contexts=numbered_contexts(turn),
            history=history,
            turn_number=turn.index + 1,
        )
        claims = verdict.claims
        known = {h["number"] for h in history}
        for claim in claims:  # support placed in a turn that does not exist (or is this one) is no support
            if claim.support in HISTORY and claim.turn is not None and claim.turn not in known:
                claim.reason = f"(support placed in turn {claim.turn}, which is not an earlier turn) {claim.reason}"
                claim.support = "none"
        flags = [c.support in SUPPORTED for c in claims]
        value = share_true(flags, if_empty="the answer makes no factual claim to check against the conversation")
        by = Counter(c.support for c in claims)
        history_only = (by["earlier_contexts"] + by["earlier_answer"]) / len(claims)
        reason = f"{sum(flags)} of {len(flags)} claims supported"
        parts = [f"{by[s]} by {s.replace('_', ' ')}" for s in SUPPORTED if by[s]]
        if parts:
            reason += " (" + ", ".join(parts) + ")"
        unsupported = [c.claim for c in claims if c.support == "none"]
        if unsupported:
            reason += "; unsupported: " + "; ".join(unsupported[:3])
        details = {
            "claims": [c.model_dump() for c in claims],
            "history_only_share": history_only,
            "support": {s: by[s] for s in (*SUPPORTED, "none")},
        }
        return Outcome(value, reason, details)
