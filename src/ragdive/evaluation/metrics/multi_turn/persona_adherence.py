"""Persona adherence (simulator fidelity, issue 25): 1 if every user message of the conversation behaves as the
simulated user's persona says, else 0. Higher is better. It measures the simulator, not the target: a run whose
users do not keep to their personas tests other behaviour than its configuration claims. Opt-in (not a default).

The persona's description and rules come from ragdive's built-in persona library (read as data); a conversation
whose persona is not a built-in one (a custom persona file, an imported run) is unscored with the reason. Details
name each violation: {"violations": [{"turn", "rule"}]}, turns 0-based as stored (the judge reads and writes them
from 1)."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, Field

from ....records import Conversation, Persona
from ...judge import Judge
from ..base import ConversationMetric, Outcome, Unscored
from ..registry import metric


class PersonaViolation(BaseModel):
    turn: int
    rule: str


class PersonaAdherenceVerdict(BaseModel):
    reason: str
    violations: list[PersonaViolation] = Field(default_factory=list)
    adherent: bool


@cache
def library() -> dict[str, Persona]:
    """The built-in personas, read from the simulation's persona files as data (no code of the simulation)."""
    folder = resources.files("ragdive.simulation").joinpath("personas")
    out = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".yaml"):
            data = yaml.safe_load(entry.read_text(encoding="utf-8"))
            for item in data if isinstance(data, list) else [data]:
                persona = Persona.model_validate(item)
                out[persona.name] = persona
    return out


@metric("persona_adherence", kind="conversation", inputs=("conversation",), default=False)
class PersonaAdherence(ConversationMetric):
    def precheck(self, conversation: Conversation) -> Unscored | None:
        if conversation.persona not in library():
            reason = f"persona {conversation.persona!r} is not a built-in one: its behaviour rules are not known here"
            return "nothing_to_measure", reason
        if not conversation.turns:
            return "nothing_to_measure", "the conversation has no turns"
        return None

    async def measure(self, judge: Judge, conversation: Conversation) -> Outcome:
        persona = library()[conversation.persona]
        turns = [
            {"number": t.index + 1, "rag_input": t.rag_input, "answer": t.answer or "(no answer)"}
            for t in conversation.turns
        ]
        verdict = await judge.ask("persona_adherence", PersonaAdherenceVerdict, persona=persona, turns=turns)
        indices = {t.index for t in conversation.turns}
        violations = [{"turn": v.turn - 1, "rule": v.rule} for v in verdict.violations]
        details: dict[str, object] = {"violations": [v for v in violations if v["turn"] in indices]}
        unplaced = [v for v in violations if v["turn"] not in indices]
        if unplaced:
            details["unplaced"] = unplaced
        if verdict.adherent == bool(verdict.violations):
            details["inconsistent"] = True  # flagged for the reader, not "fixed" either way
        return Outcome(1.0 if verdict.adherent else 0.0, verdict.reason, details)
