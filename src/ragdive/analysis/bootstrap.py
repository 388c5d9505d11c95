"""Bootstrap confidence intervals clustered by conversation, resampled in numpy.

Turns of one conversation are not independent (same document, same persona, same target state), so resampling
single turns would give intervals that are too narrow. We resample whole conversations: each cluster contributes
(sum of its scored values, number of its scored values) and the statistic is the pooled mean sum/count.

The resampling is scipy.stats.bootstrap's percentile method written out in numpy (the same draws for the same
seed, so the same interval; a test pins that): importing scipy.stats cost every run's summary ~1 s after its last
request (issue 27 measured it as the largest part of the tail).

With an int seed the resampled indices depend only on the seed and the number of clusters, not on the values, so
``cluster_bootstrap_cis`` draws them once for every metric (and group) of a summary with that many conversations:
drawing was ~90 % of an interval's cost (~0.5 s of CPU per metric at 10,000 conversations), and a report asks
for ~40 intervals.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

DEFAULT_RESAMPLES = 2000
_CHUNK = 1 << 20  # resampled indices held at once (8 MiB): a 10,000-conversation run needs no 160 MB matrix

Interval = tuple[float, float]


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
) -> Interval | None:
    """Percentile CI of the mean of ``values``, resampling clusters. None with fewer than two clusters (no
    interval can be estimated from one conversation)."""
    sums, counts = cluster_totals(values, clusters)
    resample, interval = _without_resampling(values, sums, counts)
    if not resample:
        return interval
    means = _resampled_means([(sums, counts)], n_resamples, seed)[0]
    return _percentiles(means, confidence)


def cluster_bootstrap_cis(
    samples: Sequence[tuple[Sequence[float], Sequence[Hashable]]],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[Interval | None]:
    """``cluster_bootstrap_ci`` of each (values, clusters) pair with the same seed, bit for bit, with one set of
    resampled indices drawn per number of clusters and shared by every pair with that many. An int seed only: a
    Generator goes on drawing from call to call, so one-at-a-time intervals would not share their draws."""
    intervals: list[Interval | None] = []
    by_size: dict[int, list[int]] = {}  # position of each pair still to resample, by its number of clusters
    totals = []
    for k, (values, clusters) in enumerate(samples):
        sums, counts = cluster_totals(values, clusters)
        resample, interval = _without_resampling(values, sums, counts)
        intervals.append(interval)
        totals.append((sums, counts))
        if resample:
            by_size.setdefault(sums.size, []).append(k)
    for members in by_size.values():
        means = _resampled_means([totals[k] for k in members], n_resamples, seed)
        for k, resampled in zip(members, means, strict=True):
            intervals[k] = _percentiles(resampled, confidence)
    return intervals


def _without_resampling(values: Sequence[float], sums: np.ndarray, counts: np.ndarray) -> tuple[bool, Interval | None]:
    """(True, None) when the interval needs resampling, else (False, the interval): None with fewer than two
    clusters, a point when every value is equal."""
    if sums.size < 2:
        return False, None
    if np.all(sums / counts == sums[0] / counts[0]) and np.ptp(np.asarray(values, dtype=float)) == 0:
        mean = float(sums[0] / counts[0])
        return False, (mean, mean)  # every value equal: every resample gives the same mean
    return True, None


def _resampled_means(
    totals: list[tuple[np.ndarray, np.ndarray]], n_resamples: int, seed: int | np.random.Generator | None
) -> list[np.ndarray]:
    """The pooled mean of each resample for each (sums, counts), all of one size, every one resampled with the
    same indices: scipy.stats.bootstrap(paired, vectorized, method="percentile")'s draws, an int seed seeding a
    legacy RandomState as scipy's does, a Generator drawing as scipy's rng would."""
    n = totals[0][0].size
    draw = np.random.RandomState(seed).randint if isinstance(seed, int) else np.random.default_rng(seed).integers
    rows = max(1, _CHUNK // n)
    means = [np.empty(n_resamples) for _ in totals]
    # resampled once per distinct counts array: a metric scored at every turn of every conversation has the same
    # counts as every other such metric (per turn: all ones), and summing them was a third of a metric's cost
    count_keys = [counts.tobytes() for _, counts in totals]
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        index = draw(0, n, (stop - start, n))
        resampled_counts: dict[bytes, np.ndarray] = {}
        for (sums, counts), key, out in zip(totals, count_keys, means, strict=True):
            if key not in resampled_counts:
                resampled_counts[key] = counts[index].sum(axis=1)
            out[start:stop] = sums[index].sum(axis=1) / resampled_counts[key]
    return means


def _percentiles(means: np.ndarray, confidence: float) -> Interval:
    alpha = (1 - confidence) / 2
    low, high = np.percentile(means, [alpha * 100, (1 - alpha) * 100])
    return float(low), float(high)
