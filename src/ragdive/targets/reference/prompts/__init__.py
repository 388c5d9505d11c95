"""Prompt files of the reference RAG, rendered by the one prompt loader (ragdive.prompt_files)."""

from __future__ import annotations

from ....prompt_files import render_prompt


def render(name: str, **values: object) -> str:
    return render_prompt("ragdive.targets.reference", name, **values)
