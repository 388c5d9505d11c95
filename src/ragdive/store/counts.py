"""A run's counts, from its files: conversations, turns, errors, rejections by category, scores and unscored.

Counted, never incremented: the counts are what the files hold, under the "latest line wins" rule (one
conversation per id, one rejection per id, one score per item), and only rejections of conversations on disk (a
rejection whose conversation a kill dropped is written again when the resumed run redoes it). The files are only
appended to, so a FileCounts reads each line once: a long run's every write costs only the lines added since
the last one, not a pass over the whole run. Each line is read into a slim record of the fields a count needs,
not the whole Conversation or Score: validating every turn's contexts and attempts, or every score's details,
again right after they were written was most of a recorder write's CPU (issue 27).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, model_validator

from ..records import Conversation, Totals, rejection_id
from .jsonl import read_jsonl_tail
from .latest import ScoreKey
from .run import CONVERSATIONS, EVALUATIONS, REJECTIONS

M = TypeVar("M", bound=BaseModel)


class _TurnCount(BaseModel):
    error: str | None = None


class _ConversationCount(BaseModel):
    """What the counts read of a conversation line (the fields and defaults of records.Conversation)."""

    id: str
    status: str = "finished"
    turns: list[_TurnCount] = Field(default_factory=list)
    finished: datetime


class _RejectionCount(BaseModel):
    """What the counts read of a rejection line; its id derived as records.Rejection derives it."""

    id: str = ""
    conversation_id: str
    turn_index: int | None  # None: an imported validator log that does not say
    attempt: int | None = None
    categories: list[str]

    @model_validator(mode="after")
    def _derive_id(self) -> _RejectionCount:
        if not self.id:
            self.id = rejection_id(self.conversation_id, self.turn_index, self.attempt)
        return self


class _ScoreCount(BaseModel):
    """What the counts read of a score line."""

    conversation_id: str
    turn_index: int | None = None
    metric: str
    value: float | None = None
    conversation_finished: datetime | None = None


class _Replaced(Exception):
    """A file is shorter than what was read of it before: it is not the file that was counted."""


class FileCounts:
    """Counts of one run directory, brought up to date from the files at each ``update()``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._reset()

    def _reset(self) -> None:
        self._offsets = {CONVERSATIONS: 0, REJECTIONS: 0, EVALUATIONS: 0}
        self._conversations: dict[str, tuple[int, int, datetime]] = {}
        """id → (turns, errors, finished) of its latest line."""
        self._rejections: dict[str, tuple[str, list[str]]] = {}
        """id → (conversation id, failed checks) of its latest line."""
        self._scores: dict[ScoreKey, tuple[bool, datetime | None]] = {}
        """item → (scored, the conversation line it judged) of its latest line."""

    def update(self) -> dict[str, Any]:
        """Read what was appended since the last update; the counts, as Totals fields."""
        try:
            self._read_new()
        except _Replaced:  # a user or a test replaced a file: count everything afresh
            self._reset()
            self._read_new()
        kept = [checks for cid, checks in self._rejections.values() if cid in self._conversations]
        categories = Counter(check for checks in kept for check in checks)
        # as RunStore.current_scores: a score of a conversation line redone since (a failed one, resumed) is stale
        scored = [
            ok
            for (cid, _, _), (ok, judged) in self._scores.items()
            if judged is None or cid not in self._conversations or self._conversations[cid][2] == judged
        ]
        return {
            "conversations": len(self._conversations),
            "turns": sum(turns for turns, _, _ in self._conversations.values()),
            "errors": sum(errors for _, errors, _ in self._conversations.values()),
            "rejections": len(kept),
            "rejections_by_category": dict(sorted(categories.items())),
            "scores": len(scored),
            "unscored": sum(not ok for ok in scored),
        }

    def _read_new(self) -> None:
        for conversation in self._new(CONVERSATIONS, _ConversationCount):
            self._conversations[conversation.id] = (
                len(conversation.turns),
                errors_of(conversation),
                conversation.finished,
            )
        for rejection in self._new(REJECTIONS, _RejectionCount):
            self._rejections[rejection.id] = (rejection.conversation_id, rejection.categories)
        for score in self._new(EVALUATIONS, _ScoreCount):
            key = (score.conversation_id, score.turn_index, score.metric)  # as latest.score_key
            self._scores[key] = (score.value is not None, score.conversation_finished)

    def _new(self, name: str, model: type[M]) -> list[M]:
        records, offset = read_jsonl_tail(self.path / name, model, self._offsets[name])
        if offset < 0:
            raise _Replaced(name)
        self._offsets[name] = offset
        return records


def count_files(path: Path, totals: Totals | None = None) -> Totals:
    """``totals`` with every count recounted from the run's files (spend kept as it is)."""
    return (totals or Totals()).model_copy(update=FileCounts(path).update())


def errors_of(conversation: Conversation | _ConversationCount) -> int:
    """Turns that ended in an error, or 1 for a conversation that failed outside any turn (a static question's
    failure is on its one turn and on the conversation: one error, not two)."""
    failed_turns = sum(turn.error is not None for turn in conversation.turns)
    return failed_turns or int(conversation.status == "error")
