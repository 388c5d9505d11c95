"""Per-turn attribution shared by the conversation metrics: which turn lost which earlier information.

The judge sees and writes turn numbers from 1 (as the simulation prompts, analyze and the report number them), so
its free-text reason and its attribution agree with what a reader sees; the attribution is converted back to the
records' 0-based turn indices here, and stored that way."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ....records import Conversation


class LostInformation(BaseModel):
    # as the judge writes it: turn numbers from 1
    turn: int
    refers_to_turn: int
    information: str


def place_attributions(lost: list[LostInformation], conversation: Conversation) -> dict[str, Any]:
    """Split the judge's attributions into ones that point at real turns (turn exists, refers to an earlier
    turn) and ones that do not. Both are kept, with 0-based turn indices (the judge's numbers minus one): a report
    can point at the first and show the second as given."""
    indices = {t.index for t in conversation.turns}
    placed: list[dict[str, Any]] = []
    unplaced: list[dict[str, Any]] = []
    for item in lost:
        turn, earlier = item.turn - 1, item.refers_to_turn - 1
        ok = turn in indices and earlier in indices and earlier < turn
        entry = {"turn": turn, "refers_to_turn": earlier, "information": item.information}
        (placed if ok else unplaced).append(entry)
    out: dict[str, Any] = {"lost": placed}
    if unplaced:
        out["unplaced"] = unplaced
    return out


def turns_for_prompt(conversation: Conversation) -> list[dict[str, Any]]:
    """The conversation as the judge's prompt shows it: ``number`` and ``refers_to`` counted from 1."""
    return [
        {
            "number": t.index + 1,
            "rag_input": t.rag_input,
            "answer": t.answer,
            "refers_to": None if t.refers_to_turn is None else t.refers_to_turn + 1,
        }
        for t in conversation.turns
    ]
