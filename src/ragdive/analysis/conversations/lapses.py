"""Forgetfulness and context-retention lapses, totalled from the per-turn attribution in each score's details
(``{"lost": [{"turn", "refers_to_turn", "information"}], "unplaced": [...], "inconsistent": true}``, see
evaluation/metrics/multi_turn/attribution.py).

``turn`` is where the information was lost, numbered from 1; ``distance`` is how many turns back it came from
(turn − refers_to_turn, the same in either numbering). Attributions the judge gave that point at no real earlier
turn ("unplaced") are counted but cannot be placed on either axis.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...records import Score

LAPSE_METRICS = ("forgetfulness", "context_retention")


@dataclass(frozen=True)
class LapseStats:
    metric: str
    scored: int
    """Conversations with a value for this metric."""
    unscored: int
    with_lapse: int | None
    """Scored conversations with at least one placed lapse; None (unknown) when no scored item carries an
    attribution (an imported run whose source gives only the value)."""
    lapses: int | None
    """Placed lapses; None when unknown (as with_lapse)."""
    by_turn: dict[int, int]
    by_distance: dict[int, int]
    unplaced: int
    inconsistent: int
    """Scores whose binary verdict disagreed with their own attribution (flagged by the metric, kept as given)."""
    unattributed: int = 0
    """Scored items without any attribution (the source recorded none): not counted as "no lapse"."""


def _placed(item: Any) -> tuple[int, int] | None:
    if not isinstance(item, dict):
        return None
    turn, earlier = item.get("turn"), item.get("refers_to_turn")
    if isinstance(turn, int) and isinstance(earlier, int) and earlier < turn:
        return turn, earlier
    return None


def lapse_stats(scores: Iterable[Score], metrics: Iterable[str] = LAPSE_METRICS) -> dict[str, LapseStats]:
    wanted = list(metrics)
    by_metric: dict[str, list[Score]] = {m: [] for m in wanted}
    for s in scores:
        if s.metric in by_metric:
            by_metric[s.metric].append(s)
    out = {}
    for metric, items in by_metric.items():
        by_turn: Counter[int] = Counter()
        by_distance: Counter[int] = Counter()
        with_lapse = lapses = unplaced = inconsistent = unattributed = 0
        for s in items:
            if s.value is None:
                continue
            if "lost" not in s.details and "unplaced" not in s.details:
                unattributed += 1  # ragdive's metrics always write "lost"; its absence is an unknown, not none
                continue
            placed = [p for item in s.details.get("lost", []) if (p := _placed(item)) is not None]
            # "lost" holds only placed items when written by the metric; anything else there is counted unplaced
            unplaced += len(s.details.get("unplaced", [])) + len(s.details.get("lost", [])) - len(placed)
            inconsistent += bool(s.details.get("inconsistent"))
            with_lapse += bool(placed)
            lapses += len(placed)
            for turn, earlier in placed:
                by_turn[turn + 1] += 1
                by_distance[turn - earlier] += 1
        scored = sum(s.value is not None for s in items)
        known = unattributed < scored or scored == 0
        out[metric] = LapseStats(
            metric=metric,
            scored=scored,
            unscored=len(items) - scored,
            with_lapse=with_lapse if known else None,
            lapses=lapses if known else None,
            by_turn=dict(sorted(by_turn.items())),
            by_distance=dict(sorted(by_distance.items())),
            unplaced=unplaced,
            inconsistent=inconsistent,
            unattributed=unattributed,
        )
    return out
