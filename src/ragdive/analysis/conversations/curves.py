"""Metric curves over the conversation: the mean of each per-turn metric at each turn number (from 1), with n and
a bootstrap 95 % CI clustered by conversation. Does answer quality decay as the conversation goes on?"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

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


@dataclass
class _Cell:
    """One metric at one turn: its scored values and their clusters in score order, and the unscored count."""

    values: list[float] = field(default_factory=list)
    keys: list[Hashable] = field(default_factory=list)
    unscored: int = 0
    ci: tuple[float, float] | None = None


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
    # one cell per (metric, turn) holding plain lists, not a (score, key) pair per score: at 10,000 x 5 those
    # pairs were ~300,000 objects that outlived two of the collector's young generations, enough to set off full
    # collections over the run's 600,000 records (~1 s each, 2 s of the report's curves)
    grouped: dict[str, dict[int, _Cell]] = {}
    for s, key in zip(items, keys, strict=True):
        if s.turn_index is not None:
            cell = grouped.setdefault(s.metric, {}).setdefault(s.turn_index + 1, _Cell())
            if s.value is None:
                cell.unscored += 1
            else:
                cell.values.append(float(s.value))
                cell.keys.append(key)
    cells = [(metric, turn) for metric, by_turn in grouped.items() for turn in sorted(by_turn)]
    # every cell's CI at once: cells with as many conversations share their resampled indices
    with_values = [grouped[metric][turn] for metric, turn in cells if grouped[metric][turn].values]
    cis = cluster_bootstrap_cis([(cell.values, cell.keys) for cell in with_values], seed=seed)
    for cell, ci in zip(with_values, cis, strict=True):
        cell.ci = ci
    out: dict[str, list[CurvePoint]] = {metric: [] for metric in grouped}
    for metric, turn in cells:
        cell = grouped[metric][turn]
        out[metric].append(
            CurvePoint(
                turn=turn,
                mean=float(np.mean(cell.values)) if cell.values else None,
                n=len(cell.values),
                n_unscored=cell.unscored,
                ci=cell.ci,
            )
        )
    return out
