"""The judge model's label for a failure theme (`ragdive analyze --themes --judge MODEL`): one call per theme with
its most typical items. A call that fails leaves the theme labelled by its distinctive terms (None here)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..errors import JudgeError
from .judge import Judge

ITEMS_SHOWN = 8


class ThemeLabel(BaseModel):
    reason: str = ""
    label: str = Field(min_length=1, max_length=120)


async def label_theme(judge: Judge, texts: list[str]) -> str | None:
    try:
        answer = await judge.ask("theme_label", ThemeLabel, items=[t[:600] for t in texts[:ITEMS_SHOWN]])
    except JudgeError:
        return None
    return answer.label.strip() or None
