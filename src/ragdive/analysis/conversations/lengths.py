"""Conversation lengths: how many turns conversations had, and what stopped them.

Under ``simulation.stop: fixed`` every finished conversation has max_turns turns, so the distribution only shows
the conversations that ended early; under ``satisfied`` it shows where simulated users were done.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ...records import Conversation

STOPS = ("max_turns", "user", "ended_early", "error", "not recorded")
"""What stopped a conversation: max turns reached; the simulated user ended it (stop: satisfied); the validator
loop or the target ended it early; an error; a finished conversation whose run did not record how (imported
runs, runs written before schema version 6)."""


@dataclass(frozen=True)
class Lengths:
    conversations: int
    counts: dict[int, int]
    """Conversations per number of turns, ascending."""
    by_stop: dict[str, dict[int, int]]
    """Per stop (every one of STOPS, empty where none), conversations per number of turns."""
    stops: dict[str, int]
    """Conversations per stop (every one of STOPS)."""
    mean: float | None
    """Mean turns per conversation; None without conversations."""
    median: float | None
    user_end_reasons: list[str]
    """The simulated users' reasons for ending, one per user-ended conversation, in order."""


def stop_of(conversation: Conversation) -> str:
    if conversation.status != "finished":
        return conversation.status
    return conversation.stop_reason or "not recorded"


def conversation_lengths(conversations: Iterable[Conversation]) -> Lengths:
    conversations = list(conversations)
    counts: Counter[int] = Counter()
    by_stop: dict[str, Counter[int]] = {stop: Counter() for stop in STOPS}
    reasons: list[str] = []
    for c in conversations:
        n = len(c.turns)
        counts[n] += 1
        by_stop[stop_of(c)][n] += 1
        if c.stop_reason == "user" and c.user_end_reason:
            reasons.append(c.user_end_reason)
    sizes = [len(c.turns) for c in conversations]
    return Lengths(
        conversations=len(conversations),
        counts=dict(sorted(counts.items())),
        by_stop={stop: dict(sorted(found.items())) for stop, found in by_stop.items()},
        stops={stop: sum(found.values()) for stop, found in by_stop.items()},
        mean=statistics.fmean(sizes) if sizes else None,
        median=float(statistics.median(sizes)) if sizes else None,
        user_end_reasons=reasons,
    )
