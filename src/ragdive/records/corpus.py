from __future__ import annotations

from pydantic import Field

from ._base import Record


class Document(Record):
    """One document of the target's knowledge base, used as a seed for conversations."""

    id: str
    """Stable identifier (file stem, JSONL `id`); conversations refer to documents by it."""
    title: str = ""
    """Human title, shown in reports."""
    text: str
    """Full text: the generator draws questions and ground truth from it; evidence quotes must occur in it."""
    source: str | None = None
    """Where it came from (relative path or URL), for people reading the report."""
    metadata: dict[str, object] = Field(default_factory=dict)
    """Anything else the loader found (JSONL extra columns, front matter)."""


class Persona(Record):
    """A simulated user's behaviour: concrete instructions the generator follows and the validator can check."""

    name: str
    """Short identifier, e.g. `precise`, `skeptical`."""
    description: str
    """One sentence describing the user."""
    instructions: list[str] = Field(default_factory=list)
    """Concrete behaviour rules given verbatim to the generator (and to the validator to check)."""
    preferred_question_types: list[str] = Field(default_factory=list)
    """Question types this persona leans towards after turn 1 (empty: any)."""
