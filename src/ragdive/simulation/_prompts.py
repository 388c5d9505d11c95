"""Rendering the simulation's prompt files, and the conversation-so-far view both models see."""

from __future__ import annotations

from dataclasses import dataclass

from ..prompt_files import render_prompt
from ..records import Turn


def render(name: str, **variables: object) -> str:
    """``prompts/<name>`` of the simulation (e.g. ``generator_turn.md``), through the one prompt loader."""
    return render_prompt(__package__ or "ragdive.simulation", name.removesuffix(".md"), **variables)


@dataclass(frozen=True)
class ShownTurn:
    number: int
    """1-based, as the models see it."""
    user: str
    assistant: str


def history_view(turns: list[Turn], window: int | None) -> tuple[list[ShownTurn], int]:
    """The last ``window`` finished turns (all when None), numbered from 1, and how many were left out."""
    shown = turns if window is None else turns[-window:]
    view = [
        ShownTurn(
            number=t.index + 1,
            user=t.rag_input,
            assistant=t.answer if t.answer is not None else f"(no answer: the assistant failed: {t.error})",
        )
        for t in shown
    ]
    return view, len(turns) - len(shown)
