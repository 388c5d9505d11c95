"""The reference RAG's history policies: config.history.HistoryPolicy (parsed once from ``target.history``)."""

from __future__ import annotations

from ...config.history import HistoryPolicy
from ...models import Message


def select_history(history: list[Message], policy: str | HistoryPolicy) -> list[Message]:
    """``history`` as ``policy`` keeps it (a policy's text is parsed here; the RAG parses its own once)."""
    return (HistoryPolicy.parse(policy) if isinstance(policy, str) else policy).select(history)


__all__ = ["HistoryPolicy", "select_history"]
