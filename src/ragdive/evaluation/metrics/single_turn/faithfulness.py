"""Faithfulness (Ragas definition): claims in the answer supported by the retrieved contexts ÷ claims.

One judge call extracts the claims and gives a verdict on each. An answer with no factual claim ("I don't know")
is unscored, not 1 or 0: there is nothing to be faithful about.
"""

from __future__ import annotations

from pydantic import BaseModel

from ....records import Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric, numbered_contexts, share_true
from ..registry import metric


class ClaimVerdict(BaseModel):
    claim: str
    reason: str
    supported: bool


class FaithfulnessVerdict(BaseModel):
    claims: list[ClaimVerdict]
    """Required: an answer without this list is the wrong shape (a judge failure), never "nothing to judge"."""


# version 2: an answer without its claims list is a judge failure (version 1 read it as "no claims")
@metric("faithfulness", kind="turn", inputs=("question", "answer", "contexts"), version=2)
class Faithfulness(TurnMetric):
    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        verdict = await judge.ask(
            "faithfulness",
            FaithfulnessVerdict,
            question=turn.standalone_question,
            answer=turn.answer,
            contexts=numbered_contexts(turn),
        )
        flags = [c.supported for c in verdict.claims]
        value = share_true(flags, if_empty="the answer makes no factual claim to check against the contexts")
        unsupported = [c.claim for c in verdict.claims if not c.supported]
        reason = f"{sum(flags)} of {len(flags)} claims supported by the contexts"
        if unsupported:
            reason += "; unsupported: " + "; ".join(unsupported[:3])
        return Outcome(value, reason, {"claims": [c.model_dump() for c in verdict.claims]})
