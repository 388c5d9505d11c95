"""Context precision (Ragas formula): average precision over the ranks of the relevant contexts.

All k contexts are judged in ONE call (Ragas makes one call per context). With relevance r_1..r_k:

    score = sum_i (precision@i * r_i) / (number of relevant contexts)

When no context is relevant the score is 0 (what Ragas returns too): retrieval found nothing useful, which is a
real measurement, not a judge failure. A judge answer that does not give exactly one verdict per rank is
unscored: a partial answer would silently change the formula.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from ....errors import JudgeError
from ....records import Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric, numbered_contexts
from ..registry import metric


class ContextRelevance(BaseModel):
    rank: int
    reason: str
    relevant: bool


class ContextPrecisionVerdict(BaseModel):
    verdicts: list[ContextRelevance]
    """Required: an answer without this list is the wrong shape (a judge failure), never "nothing to judge"."""


def average_precision(relevant: Sequence[bool]) -> float:
    """Average precision of a ranked list of relevance flags (0 when nothing is relevant)."""
    flags = np.asarray(relevant, dtype=float)
    if flags.size == 0:
        raise ValueError("average precision of an empty ranking is undefined")
    hits = flags.sum()
    if hits == 0:
        return 0.0
    precision_at = np.cumsum(flags) / np.arange(1, flags.size + 1)
    return float((precision_at * flags).sum() / hits)


def relevance_in_rank_order(verdict: ContextPrecisionVerdict, k: int) -> list[bool]:
    ranks = sorted(v.rank for v in verdict.verdicts)
    if ranks != list(range(1, k + 1)):
        raise JudgeError(f"judge gave verdicts for ranks {ranks}, expected exactly 1..{k}", kind="judge_unusable")
    return [v.relevant for v in sorted(verdict.verdicts, key=lambda v: v.rank)]


@metric("context_precision", kind="turn", inputs=("question", "ground_truth", "contexts"))
class ContextPrecision(TurnMetric):
    needs_answer = False
    needs_answerable = True
    needs_ground_truth = True

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        contexts = numbered_contexts(turn)
        verdict = await judge.ask(
            "context_precision",
            ContextPrecisionVerdict,
            list_items=len(contexts),
            question=turn.standalone_question,
            ground_truth=turn.ground_truth,
            contexts=contexts,
        )
        flags = relevance_in_rank_order(verdict, len(contexts))
        value = average_precision(flags)
        ranks = [i for i, rel in enumerate(flags, 1) if rel]
        reason = f"relevant at ranks {ranks} of {len(flags)}" if ranks else f"none of {len(flags)} contexts relevant"
        details = {"relevance": [v.model_dump() for v in sorted(verdict.verdicts, key=lambda v: v.rank)]}
        return Outcome(value, reason, details)
