"""Rendering the prompt files in prompts/ (jinja2), and the conversation-so-far view both models see."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import jinja2

from ..records import Turn


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ragdive.simulation", "prompts"),
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string in a prompt
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(name: str, **variables: object) -> str:
    return _environment().get_template(name).render(**variables).strip()


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
