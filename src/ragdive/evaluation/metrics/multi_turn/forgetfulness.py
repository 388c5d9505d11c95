"""Forgetfulness (RAG-DIVE): 1 if the system forgot earlier information anywhere in the conversation, else 0.
Lower is better. Details name each lapse: {"lost": [{"turn", "refers_to_turn", "information"}]}."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ....records import Conversation
from ...judge import Judge
from ..base import ConversationMetric, Outcome
from ..registry import metric
from .attribution import LostInformation, place_attributions, turns_for_prompt


class ForgetfulnessVerdict(BaseModel):
    reason: str
    lost: list[LostInformation] = Field(default_factory=list)
    forgot: bool


@metric("forgetfulness", kind="conversation", inputs=("conversation",), direction="lower")
class Forgetfulness(ConversationMetric):
    async def measure(self, judge: Judge, conversation: Conversation) -> Outcome:
        verdict = await judge.ask("forgetfulness", ForgetfulnessVerdict, turns=turns_for_prompt(conversation))
        details = place_attributions(verdict.lost, conversation)
        # the binary verdict is the score (as in the paper); a verdict that disagrees with its own attribution is
        # flagged for the reader rather than silently "fixed" either way
        if verdict.forgot != bool(verdict.lost):
            details["inconsistent"] = True
        return Outcome(1.0 if verdict.forgot else 0.0, verdict.reason, details)
