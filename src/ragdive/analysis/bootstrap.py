"""Bootstrap confidence intervals clustered by conversation (scipy.stats.bootstrap does the resampling).

Turns of one conversation are not independent (same document, same persona, same target state), so resampling
single turns would give intervals that are too narrow. We resample whole conversations: each cluster contributes
(sum of its scored values, number of its scored values) and the statistic is the pooled mean sum/count.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

DEFAULT_RESAMPLES = 2000


def cluster_totals(values: Sequence[float], clusters: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts of the values (both 1-D arrays, one entry per cluster)."""
    if len(values) != len(clusters):
        raise ValueError("values and clusters must have the same length")
    _, inverse = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    vals = np.asarray(values, dtype=float)
    return np.bincount(inverse, weights=vals), np.bincount(inverse).astype(float)


def _pooled_mean(sums: np.ndarray, counts: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sum(sums, axis=axis) / np.sum(counts, axis=axis)


def cluster_bootstrap_ci(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | np.random.Generator | None = 0,
) -> tuple[float, float] | None:
    """Percentile CI of the mean of ``values``, resampling clusters. None with fewer than two clusters (no
    interval can be estimated from one conversation)."""
    sums, counts = cluster_totals(values, clusters)
    if sums.size < 2:
        return None
    if np.all(sums / counts == sums[0] / counts[0]) and np.ptp(np.asarray(values, dtype=float)) == 0:
        mean = float(sums[0] / counts[0])
        return (mean, mean)  # every value equal: every resample gives the same mean
    from scipy import stats  # here, not at import: scipy.stats costs every command ~0.6 s of start-up

    result = stats.bootstrap(
        (sums, counts),
        _pooled_mean,
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=seed,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
