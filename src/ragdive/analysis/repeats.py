"""Across repeated runs of one configuration (the paper's Table 2): mean, std, min, max of the per-run means, and
a bootstrap 95 % CI over all scored items clustered by (run, conversation)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..records import Score
from .bootstrap import cluster_bootstrap_cis
from .summary import RunScores, exact_mean


@dataclass
class RepeatSummary:
    metric: str
    run_means: list[float]
    """Mean of each run that scored at least one item, in run order."""
    mean: float | None
    std: float | None
    """Sample standard deviation (ddof=1) of the run means; None with one run."""
    min: float | None
    max: float | None
    ci: tuple[float, float] | None
    n_scored: int
    n_unscored: int


def run_mean(scores: list[Score], metric: str) -> float | None:
    values = [float(s.value) for s in scores if s.metric == metric and s.value is not None]
    return exact_mean(values)


def summarize_repeats(runs: list[RunScores], metrics: list[str] | None = None, *, seed: int = 0) -> list[RepeatSummary]:
    wanted = metrics or list(dict.fromkeys(m for r in runs for m in r.metrics()))
    pooled = {metric: [(i, s) for i, r in enumerate(runs) for s in r.scores if s.metric == metric] for metric in wanted}
    scored = {metric: [(i, s) for i, s in items if s.value is not None] for metric, items in pooled.items()}
    # every metric's CI at once: metrics scored in as many conversations share their resampled indices
    with_values = [metric for metric in wanted if scored[metric]]
    samples = [
        ([float(s.value) for _, s in scored[m]], [(i, s.conversation_id) for i, s in scored[m]])  # type: ignore[arg-type]
        for m in with_values
    ]
    cis = dict(zip(with_values, cluster_bootstrap_cis(samples, seed=seed), strict=True))
    out = []
    for metric in wanted:
        means = [m for r in runs if (m := run_mean(r.scores, metric)) is not None]
        arr = np.asarray(means, dtype=float)
        out.append(
            RepeatSummary(
                metric=metric,
                run_means=means,
                mean=exact_mean(means),
                std=float(arr.std(ddof=1)) if arr.size > 1 else None,
                min=float(arr.min()) if arr.size else None,
                max=float(arr.max()) if arr.size else None,
                ci=cis.get(metric),
                n_scored=len(scored[metric]),
                n_unscored=len(pooled[metric]) - len(scored[metric]),
            )
        )
    return out
