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

import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, Field, model_validator

from ..records import JUDGE_FAILURES, Conversation, Totals, rejection_id, unscored_kind_from
from .jsonl import read_jsonl_tail
from .latest import ScoreKey
from .run import CONVERSATIONS, EVALUATIONS, REJECTIONS, _ConversationHead

M = TypeVar("M", bound=BaseModel)


class _TurnCount(BaseModel):
    error: str | None = None


class _ConversationCount(_ConversationHead):
    """What the counts read of a conversation line: its head (id, status, stamp) and its turns' errors."""

    turns: list[_TurnCount] = Field(default_factory=list)


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
    unscored_kind: str | None = None
    unscored_reason: str | None = None
    judge_failed: bool = False
    """details.judge_failed (the only field of the details read: lines written before unscored kinds)."""

    DERIVED: ClassVar[dict[str, str]] = {"judge_failed": "details"}
    """Fields made from a record's field (the test of the slim records checks the source instead)."""

    @model_validator(mode="before")
    @classmethod
    def _judge_failed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "details" in data:
            details = data.pop("details")
            data["judge_failed"] = bool(isinstance(details, dict) and details.get("judge_failed"))
        return data

    def judge_failure(self) -> bool:
        """Unscored because the judge failed (worth --retry-failed), as records.kind_of_unscored classifies it."""
        if self.value is not None:
            return False
        return unscored_kind_from(self.unscored_kind, self.unscored_reason, self.judge_failed) in JUDGE_FAILURES


class _Replaced(Exception):
    """A file is shorter than what was read of it before: it is not the file that was counted."""


class FileCounts:
    """Counts of one run directory, brought up to date from the files at each ``update()``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()  # shared by a run's recorders (store.recorder), which a thread may hold
        self._reset()

    def _reset(self) -> None:
        self._offsets = {CONVERSATIONS: 0, REJECTIONS: 0, EVALUATIONS: 0}
        self._conversations: dict[str, tuple[int, int, datetime, bool]] = {}
        """id → (turns, errors, finished, in error and not for a failed turn) of its latest line."""
        self._rejections: dict[str, tuple[str, list[str]]] = {}
        """id → (conversation id, failed checks) of its latest line."""
        self._scores: dict[ScoreKey, tuple[bool, datetime | None, bool]] = {}
        """item → (scored, the conversation line it judged, unscored because the judge failed) of its latest line."""

    def update(self) -> dict[str, Any]:
        """Read what was appended since the last update; the counts, as Totals fields."""
        with self._lock:
            return self._update()

    def _update(self) -> dict[str, Any]:
        try:
            self._read_new()
        except _Replaced:  # a user or a test replaced a file: count everything afresh
            self._reset()
            self._read_new()
        kept = [checks for cid, checks in self._rejections.values() if cid in self._conversations]
        categories = Counter(check for checks in kept for check in checks)
        scored = [ok for ok, _ in self._current_scores()]
        return {
            "conversations": len(self._conversations),
            "turns": sum(turns for turns, _, _, _ in self._conversations.values()),
            "errors": sum(errors for _, errors, _, _ in self._conversations.values()),
            "rejections": len(kept),
            "rejections_by_category": dict(sorted(categories.items())),
            "scores": len(scored),
            "unscored": sum(not ok for ok in scored),
        }

    def gaps(self) -> dict[str, int]:
        """Brought up to date: what store.completeness counts (conversations in error not for a failed turn,
        current items unscored because the judge failed), from the lines this counter has read."""
        with self._lock:
            self._update()
            current = list(self._current_scores())
            return {
                "conversations": len(self._conversations),
                "in_error": sum(in_error for _, _, _, in_error in self._conversations.values()),
                "items": len(current),
                "judge_failed": sum(failed for _, failed in current),
            }

    def _current_scores(self) -> Iterator[tuple[bool, bool]]:
        """(scored, judge failed) of each current item: as RunStore.current_scores, a score of a conversation line
        redone since (a failed one, resumed) is stale."""
        conversations = self._conversations
        for (cid, _, _), (ok, judged, failed) in self._scores.items():
            if judged is None or cid not in conversations or conversations[cid][2] == judged:
                yield ok, failed

    def _read_new(self) -> None:
        for conversation in self._new(CONVERSATIONS, _ConversationCount):
            failed_turn = any(turn.error is not None for turn in conversation.turns)
            self._conversations[conversation.id] = (
                len(conversation.turns),
                errors_of(conversation),
                conversation.finished,
                # a static question the target failed is marked error on its conversation too: that is the
                # target's answer, not work the run left undone (store.completeness)
                conversation.status == "error" and not failed_turn,
            )
        for rejection in self._new(REJECTIONS, _RejectionCount):
            self._rejections[rejection.id] = (rejection.conversation_id, rejection.categories)
        for score in self._new(EVALUATIONS, _ScoreCount):
            key = (score.conversation_id, score.turn_index, score.metric)  # as latest.score_key
            self._scores[key] = (score.value is not None, score.conversation_finished, score.judge_failure())

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
