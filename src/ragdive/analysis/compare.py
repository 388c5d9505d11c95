"""Between configurations: is a difference real or noise?

- Table 4 marker: `*` when a configuration's mean lies outside the baseline's min–max band over repeated runs
  (needs at least two baseline runs).
- Table 5 marker: an arrow for an absolute change of 0.05 or more against the baseline mean, as the paper marks
  them (its Table 5: 0.67 -> 0.63 and 0.07 -> 0.10 carry none, 0.93 -> 0.88 and 0.97 -> 0.92 do). The arrow
  shows the direction of the value; whether that is better depends on the metric (``lower_is_better``).
- A paired test on shared seed documents (shared questions when both sides are static runs; shared turns, by
  conversation id and turn index, when one side is a replay of the other's run): per pair key, the
  mean of the metric's scored items in each configuration; the differences get a sign-flip permutation test
  (scipy.stats.permutation_test, paired) for the p-value, a bootstrap CI of the mean difference, and Cohen's d_z
  (mean difference / SD of differences).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from .repeats import summarize_repeats
from .summary import RunScores

ARROW_THRESHOLD = 0.05
TOLERANCE = 1e-9
"""Every table rule compares with it: 0.97 -> 0.92 is a change of 0.05 to a reader, 0.0499999... to floating
point, and a mean equal to a band's edge must not fall outside it by a last bit."""
"""Absolute change of the mean that earns an arrow (the paper's Table 5)."""
ALPHA = 0.05


@dataclass
class PairedResult:
    n_pairs: int
    mean_diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    effect_size: float | None
    """Cohen's d_z; None when every difference is equal (no spread to scale by)."""

    @property
    def verdict(self) -> str:
        if self.p_value is None or smallest_p(self.n_pairs) >= ALPHA:
            # with n pairs a sign-flip test cannot go below 2 / 2**n: at 5 pairs or fewer, "noise" would be a
            # verdict the data could never have overturned
            return "too few pairs"
        return "real" if self.p_value < ALPHA else "noise"


def smallest_p(n_pairs: int) -> float:
    """The smallest two-sided p-value a sign-flip permutation test can give with ``n_pairs`` pairs."""
    return min(1.0, 2.0 / 2.0**n_pairs) if n_pairs > 0 else 1.0


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def paired_test(baseline: np.ndarray, candidate: np.ndarray, *, n_resamples: int = 9999, seed: int = 0) -> PairedResult:
    """Candidate minus baseline over paired items. Needs at least 3 pairs for a test."""
    x, y = np.asarray(baseline, dtype=float), np.asarray(candidate, dtype=float)
    n = int(x.size)
    if n == 0:
        return PairedResult(0, None, None, None, None)
    diffs = y - x
    mean_diff = float(diffs.mean())
    if n < 3:
        return PairedResult(n, mean_diff, None, None, None)
    sd = float(diffs.std(ddof=1))
    rng = np.random.default_rng(seed)
    from scipy import stats  # here, not at import: scipy.stats costs every command ~0.6 s of start-up

    perm = stats.permutation_test(
        (x, y), _mean_diff, permutation_type="samples", vectorized=True, n_resamples=n_resamples, random_state=rng
    )
    boot = stats.bootstrap((diffs,), np.mean, vectorized=True, n_resamples=2000, method="percentile", random_state=rng)
    ci = (float(boot.confidence_interval.low), float(boot.confidence_interval.high))
    # equal differences up to float noise have no spread: d_z would be a meaningless 1e15
    spread = sd > 1e-9 * max(1.0, abs(mean_diff))
    return PairedResult(n, mean_diff, ci, float(perm.pvalue), mean_diff / sd if spread else None)


def document_means(runs: list[RunScores], metric: str, *, by: str = "documents") -> dict[tuple[str, ...], float]:
    """Mean of the metric's scored items per pairing key, pooled over the runs of one configuration. The key is
    the conversation's seed-document set (``by="documents"``) or, for static runs whose conversation ids are
    dataset rows, the conversation id (``by="conversation"``), or, for a replay and its source, whose
    conversations are the same ones turn by turn, the conversation id and turn index (``by="turn"``; a
    whole-conversation metric's key has turn "-")."""
    if by == "turn":
        return _turn_means(runs, metric)
    docs: dict[tuple[int, str], tuple[str, ...]] = {
        (i, c.id): (c.id,) if by == "conversation" else tuple(sorted(c.document_ids))
        for i, r in enumerate(runs)
        for c in r.conversations
    }
    values: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for i, r in enumerate(runs):
        for s in r.scores:
            if s.metric == metric and s.value is not None and (i, s.conversation_id) in docs:
                values[docs[(i, s.conversation_id)]].append(float(s.value))
    return {k: float(np.mean(v)) for k, v in values.items()}


def _turn_means(runs: list[RunScores], metric: str) -> dict[tuple[str, ...], float]:
    """Per (conversation id, turn index): the same recorded question in a replay and in its source. Turns of one
    conversation share a seed document and a user, so their differences are not fully independent: the p-value
    of a per-turn pairing is somewhat optimistic next to a per-conversation one."""
    values: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for r in runs:
        ids = {c.id for c in r.conversations}
        for s in r.scores:
            if s.metric == metric and s.value is not None and s.conversation_id in ids:
                turn = "-" if s.turn_index is None else str(s.turn_index)
                values[(s.conversation_id, turn)].append(float(s.value))
    return {k: float(np.mean(v)) for k, v in values.items()}


def pairing_for(baseline: list[RunScores], candidate: list[RunScores]) -> str:
    """A replay and the run it replayed (or two replays of one run) ask the same turns: pair per turn. Static runs
    of the same dataset share question ids: pair per question. Anything else pairs per seed document."""
    runs = [*baseline, *candidate]
    origins = {r.source_run if r.kind == "replay" else r.run_id for r in runs}
    if any(r.kind == "replay" for r in runs) and len(origins) == 1:
        return "turn"
    return "conversation" if all(r.kind == "static" for r in runs) else "documents"


@dataclass
class MetricComparison:
    metric: str
    baseline_mean: float | None
    band: tuple[float, float] | None
    mean: float | None
    n_scored: int
    n_unscored: int
    outside_band: bool
    change: float | None
    """Candidate mean minus baseline mean (absolute, as the arrows use it)."""
    relative_change: float | None
    arrow: str
    better: bool | None
    """Whether the arrow's change is an improvement for this metric; None without an arrow."""
    paired: PairedResult
    paired_on: str = "documents"
    """What the paired test pairs: seed "documents", static "conversation" ids (questions), or a replay's "turn"s."""
    lower_is_better: bool = False
    """The metric improves downwards: a built-in's registry entry, or a custom metric its runs declared so."""


def relative_change(base: float | None, value: float | None) -> float | None:
    if base is None or value is None or base == 0:
        return None
    return (value - base) / abs(base)


def arrow_for(base: float | None, value: float | None) -> str:
    """↑ or ↓ for an absolute change of at least ARROW_THRESHOLD, else ""."""
    if base is None or value is None:
        return ""
    change = value - base
    if change >= ARROW_THRESHOLD - TOLERANCE:
        return "↑"
    if change <= -ARROW_THRESHOLD + TOLERANCE:
        return "↓"
    return ""


def compare_configurations(
    baseline: list[RunScores],
    candidate: list[RunScores],
    metrics: list[str] | None = None,
    *,
    seed: int = 0,
    lower_is_better: Collection[str] = (),
) -> list[MetricComparison]:
    """``lower_is_better``: metric names whose decrease is the improvement (forgetfulness); the caller passes them
    from the metric registry, which this package does not import."""
    wanted = metrics or list(dict.fromkeys(m for r in [*baseline, *candidate] for m in r.metrics()))
    lower_is_better = set(lower_is_better).union(*(r.lower_is_better for r in [*baseline, *candidate]))
    base_rep = {s.metric: s for s in summarize_repeats(baseline, wanted, seed=seed)}
    cand_rep = {s.metric: s for s in summarize_repeats(candidate, wanted, seed=seed)}
    pairing = pairing_for(baseline, candidate)
    out = []
    for metric in wanted:
        b, c = base_rep[metric], cand_rep[metric]
        band = (b.min, b.max) if len(b.run_means) >= 2 and b.min is not None and b.max is not None else None
        outside = band is not None and c.mean is not None and not (band[0] - TOLERANCE <= c.mean <= band[1] + TOLERANCE)
        bd, cd = document_means(baseline, metric, by=pairing), document_means(candidate, metric, by=pairing)
        shared = sorted(set(bd) & set(cd))
        paired = paired_test(np.array([bd[k] for k in shared]), np.array([cd[k] for k in shared]), seed=seed)
        out.append(
            MetricComparison(
                metric=metric,
                baseline_mean=b.mean,
                band=band,
                mean=c.mean,
                n_scored=c.n_scored,
                n_unscored=c.n_unscored,
                outside_band=outside,
                change=None if b.mean is None or c.mean is None else c.mean - b.mean,
                relative_change=relative_change(b.mean, c.mean),
                arrow=(arrow := arrow_for(b.mean, c.mean)),
                better=None if not arrow else (arrow == "↓") == (metric in lower_is_better),
                paired=paired,
                paired_on=pairing,
                lower_is_better=metric in lower_is_better,
            )
        )
    return out
