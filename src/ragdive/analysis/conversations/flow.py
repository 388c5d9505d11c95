"""Question-type flow: which kinds of question the simulated user asks at each turn (the paper's §5.1).

Turns are numbered from 1 here, as users and validator reasons count them (records store 0-based indices).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ...records import SIMULATED_TYPES, Conversation

TYPES = tuple(str(t) for t in SIMULATED_TYPES)
"""Every type is listed in every result, with 0 where none was asked, so tables and JSON keep one shape. "unknown"
(imported runs whose source did not say) is listed only where it occurs."""


@dataclass(frozen=True)
class TypeShares:
    n: int
    """Turns counted."""
    counts: dict[str, int]
    shares: dict[str, float | None]
    """count ÷ n per type; None when n is 0 (no turns is not 0 %)."""


@dataclass(frozen=True)
class Flow:
    per_turn: dict[int, TypeShares]
    """Keyed by turn number (1-based)."""
    overall: TypeShares
    """Every turn."""
    after_first: TypeShares
    """Turns 2 and later: the types the generator chose itself (turn 1 is always the initial question), which is
    what the paper's averages are over."""


def type_shares(types: Iterable[str], listed: Iterable[str] = ()) -> TypeShares:
    """``listed``: types outside the simulated five to list even where none was asked (so that every turn of a
    flow has the same keys)."""
    counted = Counter(types)
    n = sum(counted.values())
    counts = {t: counted.get(t, 0) for t in (*TYPES, *listed)}
    # "unknown" (an imported run) or a type a migrated file carries: listed after the simulated ones
    counts.update({t: c for t, c in counted.items() if t not in counts})
    return TypeShares(n, counts, {t: (c / n if n else None) for t, c in counts.items()})


def question_flow(conversations: Iterable[Conversation]) -> Flow:
    by_turn: dict[int, list[str]] = {}
    for conversation in conversations:
        for turn in conversation.turns:
            by_turn.setdefault(turn.index + 1, []).append(str(turn.question_type))
    every = [t for types in by_turn.values() for t in types]
    later = [t for number, types in by_turn.items() if number > 1 for t in types]
    others = sorted({t for t in every if t not in TYPES})  # "unknown" in an imported run: a column in every row
    return Flow(
        per_turn={number: type_shares(by_turn[number], others) for number in sorted(by_turn)},
        overall=type_shares(every, others),
        after_first=type_shares(later, others),
    )
