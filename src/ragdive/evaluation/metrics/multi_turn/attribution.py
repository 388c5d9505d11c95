"""Per-turn attribution shared by the conversation metrics: which turn lost which earlier information."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ....records import Conversation


class LostInformation(BaseModel):
    turn: int
    """Turn where the earlier information was lost."""
    refers_to_turn: int
    """Earlier turn the information came from."""
    information: str
    """What was lost."""


def place_attributions(lost: list[LostInformation], conversation: Conversation) -> dict[str, Any]:
    """Split the judge's attributions into ones that point at real turns (turn exists, refers to an earlier
    turn) and ones that do not. Both are kept: a report can point at the first and show the second as given."""
    indices = {t.index for t in conversation.turns}
    placed: list[dict[str, Any]] = []
    unplaced: list[dict[str, Any]] = []
    for item in lost:
        ok = item.turn in indices and item.refers_to_turn in indices and item.refers_to_turn < item.turn
        (placed if ok else unplaced).append(item.model_dump())
    out: dict[str, Any] = {"lost": placed}
    if unplaced:
        out["unplaced"] = unplaced
    return out


def turns_for_prompt(conversation: Conversation) -> list[dict[str, Any]]:
    return [
        {"index": t.index, "rag_input": t.rag_input, "answer": t.answer, "refers_to_turn": t.refers_to_turn}
        for t in conversation.turns
    ]
