"""The "latest line wins" read rule of the append-only files.

evaluations.jsonl and rejections.jsonl are only ever appended to, so the same item can have several lines: a
retried judge failure leaves its old unscored line behind, and a run killed between a conversation's rejection
lines and its conversation line writes those rejections again when the resumed run redoes the conversation.
Every reader and every counter keeps one record per key, the last one written, so a count never depends on how
often a run was stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable
from typing import TypeVar

from ..records import Rejection, Score

T = TypeVar("T")
ScoreKey = tuple[str, int | None, str]


def score_key(score: Score) -> ScoreKey:
    """A score's identity: (conversation, turn or None for a whole-conversation metric, metric)."""
    return (score.conversation_id, score.turn_index, score.metric)


def latest(records: Iterable[T], key: Callable[[T], Hashable]) -> list[T]:
    """One record per key, the last one written; in the order of the winning lines."""
    kept: dict[Hashable, T] = {}
    for record in records:
        k = key(record)
        kept.pop(k, None)  # re-insert so the order follows the winning line
        kept[k] = record
    return list(kept.values())


def latest_scores(scores: Iterable[Score]) -> list[Score]:
    """One score per (conversation, turn, metric): the last line written wins."""
    return latest(scores, score_key)


def latest_rejections(
    rejections: Iterable[Rejection], conversation_ids: Collection[str] | None = None
) -> list[Rejection]:
    """One rejection per id, the last line written. With ``conversation_ids`` (the conversations on disk), only
    theirs: rejections are written just before their conversation, so one whose conversation is not on disk
    belongs to a conversation a kill dropped; the resumed run writes it again when it redoes that conversation."""
    kept = latest(rejections, lambda r: r.id)
    if conversation_ids is None:
        return kept
    return [r for r in kept if r.conversation_id in conversation_ids]
