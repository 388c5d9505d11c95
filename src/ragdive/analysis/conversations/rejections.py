"""Validator rejections (the paper's §5.2): by category × turn × attempt, and how turns got accepted.

A rejection can name several failed checks; it is counted once in each of its categories, so the category counts
may sum to more than the number of rejections (``total``). Turns are numbered from 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...records import Conversation, Rejection, Turn

NO_CATEGORY = "uncategorised"
"""A rejection whose verdict named no failed check still happened; it is counted under this name."""


@dataclass(frozen=True)
class RejectionCell:
    category: str
    turn: int
    attempt: int
    """1-based attempt number the rejected draft was."""
    count: int


@dataclass(frozen=True)
class Acceptance:
    turns: int
    first_try: int
    """Accepted on the first draft: one attempt, valid, no unreadable drafts before it, not overruled."""
    overruled: int
    """Accepted only because attempts ran out (``validator_overruled``)."""
    first_try_rate: float | None
    """Over the turns with a validator history; None when none has one."""
    overruled_share: float | None
    unrecorded: int = 0
    """Turns without a validator history (static questions, imported turns): not in the rates."""
    drafts: int = 0
    """Drafts the validator stage saw (every attempt of those turns)."""
    deterministic_rejections: int = 0
    """Drafts rejected by the deterministic checks, before any validator call."""
    deterministic_rate: float | None = None
    """deterministic_rejections ÷ drafts: how often the simulated user broke a rule a check can see for certain
    (a quote not in the document, a mentioned document...); None without drafts."""


@dataclass(frozen=True)
class RejectionStats:
    total: int | None
    """Rejection records; None (unknown) when no turn has a validator history and none is on disk (an imported
    or static run): no history is not "no rejections"."""
    by_category: dict[str, int]
    by_turn: dict[int, int]
    by_attempt: dict[int, int]
    cells: list[RejectionCell]
    """Category × turn × attempt, sorted by category, turn, attempt; only non-empty cells."""
    acceptance: Acceptance
    """Over every finished turn."""
    acceptance_per_turn: dict[int, Acceptance]
    per_100_turns: float | None = None
    """Rejections per 100 finished turns (the paper's section 5.2 figure); None without turns."""
    category_shares: dict[str, float] = field(default_factory=dict)
    """Each category's count ÷ rejections (a rejection naming two categories counts in both)."""


def _first_try(turn: Turn) -> bool:
    return (
        not turn.validator_overruled
        and not turn.generation_errors
        and len(turn.attempts) == 1
        and turn.attempts[0].verdict.valid
    )


def acceptance(turns: Iterable[Turn]) -> Acceptance:
    """Rates over the turns with a validator history: a turn without attempts (a static question, an imported
    turn whose source kept none) has no first try to count, and counting it as "not first try" would be a
    made-up 0."""
    every = list(turns)
    items = [t for t in every if t.attempts or t.generation_errors or t.validator_overruled]
    n = len(items)
    first = sum(_first_try(t) for t in items)
    over = sum(bool(t.validator_overruled) for t in items)
    drafts = [a for t in items for a in t.attempts]
    checked = sum(not a.verdict.valid and a.verdict.checked_by == "deterministic" for a in drafts)
    return Acceptance(
        len(every),
        first,
        over,
        first / n if n else None,
        over / n if n else None,
        len(every) - n,
        drafts=len(drafts),
        deterministic_rejections=checked,
        deterministic_rate=checked / len(drafts) if drafts else None,
    )


def rejection_stats(conversations: Iterable[Conversation], rejections: Iterable[Rejection]) -> RejectionStats:
    """``rejections`` should be the current ones (one per id, RunStore.current_rejections) of these
    conversations; a conversation's rejected drafts are not in its turns, which keep only what was accepted."""
    cells: Counter[tuple[str, int, int]] = Counter()
    by_turn: Counter[int] = Counter()
    by_attempt: Counter[int] = Counter()
    total = 0
    by_category: Counter[str] = Counter()
    for r in rejections:
        total += 1
        categories = [str(c) for c in r.categories] or [NO_CATEGORY]
        by_category.update(categories)
        # an imported log may not say the turn or the attempt: counted by category, placed only where known
        if r.turn_index is not None:
            by_turn[r.turn_index + 1] += 1
        if r.attempt is not None:
            by_attempt[r.attempt] += 1
        if r.turn_index is not None and r.attempt is not None:
            for category in categories:
                cells[(category, r.turn_index + 1, r.attempt)] += 1
    turns_by_number: dict[int, list[Turn]] = {}
    for conversation in conversations:
        for turn in conversation.turns:
            turns_by_number.setdefault(turn.index + 1, []).append(turn)
    every = acceptance(t for ts in turns_by_number.values() for t in ts)
    known = total > 0 or every.unrecorded < every.turns
    return RejectionStats(
        total=total if known else None,
        by_category=dict(by_category.most_common()),
        by_turn=dict(sorted(by_turn.items())),
        by_attempt=dict(sorted(by_attempt.items())),
        cells=[RejectionCell(c, t, a, n) for (c, t, a), n in sorted(cells.items())],
        acceptance=every,
        acceptance_per_turn={k: acceptance(turns_by_number[k]) for k in sorted(turns_by_number)},
        per_100_turns=100 * total / turns if (turns := sum(map(len, turns_by_number.values()))) else None,
        category_shares={c: n / total for c, n in by_category.most_common()} if total else {},
    )
