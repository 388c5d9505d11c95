"""Rendering the simulation's prompt files, and the conversation-so-far view both models see."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..prompt_files import render_prompt
from ..records import Persona, Turn


def render(name: str, **variables: object) -> str:
    """``prompts/<name>`` of the simulation (e.g. ``generator_turn.md``), through the one prompt loader."""
    return render_prompt(__package__ or "ragdive.simulation", name.removesuffix(".md"), **variables)


def system_prompt(name: str, persona: Persona, checks: list[tuple[str, str]] | None = None) -> str:
    """A system prompt that depends on the persona alone (and the fixed list of checks): rendered once per
    persona and run, not at every draft and verdict (the same text every time: the prefix a provider caches)."""
    return _system_prompt(name, persona.model_dump_json(), tuple(checks) if checks is not None else None)


@lru_cache(maxsize=256)
def _system_prompt(name: str, persona_json: str, checks: tuple[tuple[str, str], ...] | None) -> str:
    persona = Persona.model_validate_json(persona_json)
    return render(name, persona=persona, **({} if checks is None else {"checks": list(checks)}))


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
