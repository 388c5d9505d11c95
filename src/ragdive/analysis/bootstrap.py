"""Bootstrap confidence intervals clustered by conversation, resampled in numpy.

Turns of one conversation are not independent (same document, same persona, same target state), so resampling
single turns would give intervals that are too narrow. We resample whole conversations: each cluster contributes
(sum of its scored values, number of its scored values) and the statistic is the pooled mean sum/count.

The resampling is scipy.stats.bootstrap's percentile method written out in numpy (the same draws for the same
seed, so the same interval; a test pins that): importing scipy.stats cost every run's summary ~1 s after its last
request (issue 27 measured it as the largest part of the tail).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

DEFAULT_RESAMPLES = 2000
_CHUNK = 1 << 20  # resampled indices held at once (8 MiB): a 10,000-conversation run needs no 160 MB matrix


def cluster_totals(values: Sequence[float], clusters: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts of the values (both 1-D arrays, one entry per cluster)."""
    if len(values) != len(clusters):
        raise ValueError("values and clusters must have the same length")
    _, inverse = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    vals = np.asarray(values, dtype=float)
    return np.bincount(inverse, weights=vals), np.bincount(inverse).astype(float)


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
    return _percentile_interval(sums, counts, confidence, n_resamples, seed)


def _percentile_interval(
    sums: np.ndarray, counts: np.ndarray, confidence: float, n_resamples: int, seed: int | np.random.Generator | None
) -> tuple[float, float]:
    """scipy.stats.bootstrap(paired, vectorized, method="percentile") for the pooled mean: an int seed seeds a
    legacy RandomState as scipy's does, a Generator draws as scipy's rng would."""
    n = sums.size
    draw = np.random.RandomState(seed).randint if isinstance(seed, int) else np.random.default_rng(seed).integers
    rows = max(1, _CHUNK // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        index = draw(0, n, (stop - start, n))
        means[start:stop] = sums[index].sum(axis=1) / counts[index].sum(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.percentile(means, [alpha * 100, (1 - alpha) * 100])
    return float(low), float(high)
