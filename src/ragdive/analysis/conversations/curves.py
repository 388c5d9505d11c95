"""Metric curves over the conversation: the mean of each per-turn metric at each turn number (from 1), with n and
a bootstrap 95 % CI clustered by conversation. Does answer quality decay as the conversation goes on?"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from ...records import Score
from ..bootstrap import cluster_bootstrap_cis


@dataclass(frozen=True)
class CurvePoint:
    turn: int
    mean: float | None
    n: int
    """Scored items at this turn."""
    n_unscored: int
    ci: tuple[float, float] | None
    """None with fewer than two conversations scored at this turn."""


def metric_curves(
    scores: Iterable[Score], clusters: Iterable[Hashable] | None = None, *, seed: int = 0
) -> dict[str, list[CurvePoint]]:
    """``clusters`` runs parallel to ``scores`` (default: each score's conversation id). Pass (run, conversation)
    pairs when pooling runs: repeats of one run plan reuse conversation ids, and they are different conversations.
    Whole-conversation metrics (turn_index None) have no curve and are left out."""
    items = list(scores)
    keys: list[Hashable] = list(clusters) if clusters is not None else [s.conversation_id for s in items]
    if len(keys) != len(items):
        raise ValueError("clusters must run parallel to scores")
    grouped: dict[str, dict[int, list[tuple[Score, Hashable]]]] = {}
    for s, key in zip(items, keys, strict=True):
        if s.turn_index is not None:
            grouped.setdefault(s.metric, {}).setdefault(s.turn_index + 1, []).append((s, key))
    cells = [(metric, turn) for metric, by_turn in grouped.items() for turn in sorted(by_turn)]
    scored = {cell: [(s, k) for s, k in grouped[cell[0]][cell[1]] if s.value is not None] for cell in cells}
    values = {cell: [float(s.value) for s, _ in pairs] for cell, pairs in scored.items()}  # type: ignore[arg-type]
    # every cell's CI at once: cells with as many conversations share their resampled indices
    with_values = [cell for cell in cells if values[cell]]
    samples = [(values[cell], [k for _, k in scored[cell]]) for cell in with_values]
    cis = dict(zip(with_values, cluster_bootstrap_cis(samples, seed=seed), strict=True))
    out: dict[str, list[CurvePoint]] = {metric: [] for metric in grouped}
    for metric, turn in cells:
        cell_values = values[(metric, turn)]
        out[metric].append(
            CurvePoint(
                turn=turn,
                mean=float(np.mean(cell_values)) if cell_values else None,
                n=len(cell_values),
                n_unscored=len(grouped[metric][turn]) - len(cell_values),
                ci=cis.get((metric, turn)),
            )
        )
    return out
