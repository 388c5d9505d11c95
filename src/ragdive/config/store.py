from __future__ import annotations

from pydantic import Field

from ._base import Section


class StoreConfig(Section):
    """What the run directory keeps."""

    max_text_chars: int | None = Field(default=100_000, ge=1000)
    """Longest text stored (an answer, a context, a judge reason): longer ones are cut, ending in a visible
    "[truncated by ragdive: N characters ...]" marker. null: no cap."""
