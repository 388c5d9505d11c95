from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import Section


class SimulationConfig(Section):
    """How conversations are simulated."""

    conversations: int = Field(default=10, ge=1)
    """Conversations to simulate."""
    max_turns: int = Field(default=5, ge=1)
    """Turns per conversation."""
    personas: list[str] = Field(default_factory=lambda: ["precise"])
    """Persona names, used in rotation; built-ins or names from persona_files."""
    persona_files: list[str] = Field(default_factory=list)
    """YAML files with custom personas."""
    max_attempts: int = Field(default=3, ge=1)
    """Drafts per turn before the validator loop gives up."""
    on_exhausted: Literal["accept", "end"] = "accept"
    """accept: keep the last draft, marked validator_overruled; end: end the conversation early."""
    history_window: int | None = Field(default=None, ge=1)
    """Turns of history the generator sees (None: all)."""
    unanswerable_rate: float = Field(default=0.0, ge=0, le=1)
    """Share of turns that probe for something the document does not say."""
    concurrency: int = Field(default=4, ge=1)
    """Conversations in flight at once."""
