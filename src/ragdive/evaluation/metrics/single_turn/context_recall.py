"""Context recall (Ragas definition): ground-truth statements attributable to the retrieved contexts ÷ statements.

A ground truth the judge cannot split into any statement is unscored. Unanswerable probes are unscored: their
ground truth ("not in the knowledge base") has nothing a context could cover.
"""

from __future__ import annotations

from pydantic import BaseModel

from ....records import Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric, numbered_contexts, share_true
from ..registry import metric


class StatementAttribution(BaseModel):
    statement: str
    reason: str
    context: int | None = None
    attributed: bool


class ContextRecallVerdict(BaseModel):
    statements: list[StatementAttribution]
    """Required: an answer without this list is the wrong shape (a judge failure), never "nothing to judge"."""


# version 2: no statement (or no statements list) is a judge failure (version 1: nothing to measure)
@metric("context_recall", kind="turn", inputs=("ground_truth", "contexts"), version=2)
class ContextRecall(TurnMetric):
    needs_answer = False
    needs_answerable = True
    needs_ground_truth = True

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        verdict = await judge.ask(
            "context_recall",
            ContextRecallVerdict,
            question=turn.standalone_question,
            ground_truth=turn.ground_truth,
            contexts=numbered_contexts(turn),
        )
        flags = [s.attributed for s in verdict.statements]
        # a ground truth always states something: no statement at all is the judge failing, asked again on retry
        value = share_true(
            flags, if_empty="the judge found no statement in the ground truth to attribute", judge_failed=True
        )
        missing = [s.statement for s in verdict.statements if not s.attributed]
        reason = f"{sum(flags)} of {len(flags)} ground-truth statements found in the contexts"
        if missing:
            reason += "; missing: " + "; ".join(missing[:3])
        return Outcome(value, reason, {"statements": [s.model_dump() for s in verdict.statements]})
