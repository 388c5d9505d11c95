"""Context retention (RAG-DIVE): 1 if every turn that depends on earlier turns was answered in their context,
else 0. Higher is better. Details name each lapse: {"lost": [{"turn", "refers_to_turn", "information"}]}."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ....records import Conversation
from ...judge import Judge
from ..base import ConversationMetric, Outcome
from ..registry import metric
from .attribution import LostInformation, place_attributions, turns_for_prompt


class ContextRetentionVerdict(BaseModel):
    reason: str
    lost: list[LostInformation] = Field(default_factory=list)
    retained: bool


@metric("context_retention", kind="conversation", inputs=("conversation",))
class ContextRetention(ConversationMetric):
    async def measure(self, judge: Judge, conversation: Conversation) -> Outcome:
        verdict = await judge.ask("context_retention", ContextRetentionVerdict, turns=turns_for_prompt(conversation))
        details = place_attributions(verdict.lost, conversation)
        if verdict.retained == bool(verdict.lost):
            details["inconsistent"] = True
        return Outcome(1.0 if verdict.retained else 0.0, verdict.reason, details)
