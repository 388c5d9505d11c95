"""Correctness: does the answer agree with the ground truth? Binary, with the judge's reason.

Judged against the ground truth (the RAG-DIVE paper's code judged without it). For an unanswerable probe the
correct answer is a refusal ("not in the knowledge base"), and the prompt says so. Contexts are not needed.
"""

from __future__ import annotations

from pydantic import BaseModel

from ....records import Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric
from ..registry import metric


class CorrectnessVerdict(BaseModel):
    reason: str
    correct: bool


@metric("correctness", kind="turn", inputs=("question", "ground_truth", "answer"))
class Correctness(TurnMetric):
    needs_contexts = False
    needs_ground_truth = True

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        verdict = await judge.ask(
            "correctness",
            CorrectnessVerdict,
            question=turn.standalone_question,
            ground_truth=turn.ground_truth,
            answer=turn.answer,
            unanswerable=turn.unanswerable,
        )
        return Outcome(1.0 if verdict.correct else 0.0, verdict.reason, {"unanswerable": turn.unanswerable})
