"""The resampled indices of the clustered bootstrap are drawn once for every metric and group with as many
conversations, and every interval is bit for bit the one the straightforward per-metric computation gives."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from ragdive.analysis import RunScores, cluster_totals, summarize_by, summarize_run
from ragdive.analysis.bootstrap import cluster_bootstrap_cis
from ragdive.analysis.conversations import metric_curves
from ragdive.records import Score
from tests.factories import make_conversation


def reference_ci(values: list[float], clusters: list[str], n_resamples: int = 2000) -> tuple[float, float] | None:
    """The computation before sharing, one metric at a time (seed 0): its own legacy RandomState, its own draws."""
    sums, counts = cluster_totals(values, clusters)
    if sums.size < 2:
        return None
    if np.all(sums / counts == sums[0] / counts[0]) and np.ptp(np.asarray(values)) == 0:
        return (float(sums[0] / counts[0]),) * 2
    n = sums.size
    rows = max(1, (1 << 20) // n)
    state = np.random.RandomState(0)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        index = state.randint(0, n, (stop - start, n))
        means[start:stop] = sums[index].sum(axis=1) / counts[index].sum(axis=1)
    alpha = (1 - 0.95) / 2  # 0.025000000000000022, not 0.025: the percentiles as the module computes them
    low, high = np.percentile(means, [alpha * 100, (1 - alpha) * 100])
    return float(low), float(high)


def scripted_run(conversations: int, seed: int = 1) -> RunScores:
    """Three per-turn metrics over 3 turns and one per conversation; one metric unscored at some turns, so that
    its groups have fewer conversations (a resample of another size) and unequal counts."""
    rng = np.random.default_rng(seed)
    convs = [make_conversation(f"c{k:04d}", turns=3, index=k) for k in range(conversations)]
    scores = []
    for c in convs:
        for turn in range(3):
            for metric in ("faithfulness", "relevancy", "recall"):
                skipped = metric == "recall" and rng.random() < 0.3
                value = None if skipped else round(float(rng.random()), 3)
                if value is None:
                    scores.append(Score.unscored(conversation_id=c.id, metric=metric, reason="x", turn_index=turn))
                else:
                    scores.append(Score(conversation_id=c.id, metric=metric, value=value, turn_index=turn))
        scores.append(Score(conversation_id=c.id, metric="retention", value=float(rng.integers(0, 2))))
    return RunScores(name="r", conversations=convs, scores=scores)


def scored(run: RunScores, metric: str, turn: int | None = None) -> tuple[list[float], list[str]]:
    items = [s for s in run.scores if s.metric == metric and s.value is not None and turn in (None, s.turn_index)]
    return [float(s.value) for s in items], [s.conversation_id for s in items]  # type: ignore[arg-type]


@pytest.mark.parametrize("conversations", [40, 1500])  # 1,500: resampled in two chunks
def test_shared_draws_give_the_intervals_of_one_metric_at_a_time(conversations: int) -> None:
    run = scripted_run(conversations)
    for summary in summarize_run(run):
        assert summary.ci == reference_ci(*scored(run, summary.metric))
    for metric, groups in summarize_by(run, "turn").items():
        for turn, summary in groups.items():
            assert summary.ci == reference_ci(*scored(run, metric, int(turn) - 1))
    for metric, points in metric_curves(run.scores).items():
        for point in points:
            assert point.ci == reference_ci(*scored(run, metric, point.turn - 1))


def test_edge_cases_keep_their_place() -> None:
    samples = [([0.5, 0.7], ["a", "a"]), ([1.0, 1.0, 1.0], ["a", "b", "c"]), ([0.1, 0.9, 0.4], ["a", "b", "c"])]
    assert cluster_bootstrap_cis(samples) == [None, (1.0, 1.0), reference_ci(*samples[2])]


def test_indices_are_drawn_once_per_number_of_conversations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four metrics, three of them scored in all 40 conversations and one in fewer: two sets of draws, not four
    (drawing was ~90 % of an interval's cost)."""
    seeded: list[object] = []

    class Counting(np.random.RandomState):
        def __init__(self, seed: object = None) -> None:
            seeded.append(seed)
            super().__init__(seed)  # type: ignore[arg-type]

    monkeypatch.setattr(np.random, "RandomState", Counting)
    run = scripted_run(40)
    sizes = {m: len(set(scored(run, m)[1])) for m in run.metrics()}
    assert len(set(sizes.values())) == 2  # the skipped recall scores leave a conversation or more out (seed 1)
    summarize_run(run)
    assert seeded == [0, 0]


def test_curves_keep_no_object_per_score_while_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    """The curves' cells hold plain lists of values and clusters: an object per score kept until the CIs are
    computed (a (score, cluster) pair each) set off full collections over a big run's records (~2 s at 10,000 x 5)."""
    from ragdive.analysis.conversations import curves

    run = scripted_run(300)  # 2,700 per-turn scores
    alive: list[int] = []
    real = curves.cluster_bootstrap_cis

    def counting(samples: list[tuple[list[float], list[str]]], **kwargs: int) -> list[tuple[float, float] | None]:
        alive.append(len(gc.get_objects()))  # while every cell is built and held
        return real(samples, **kwargs)

    monkeypatch.setattr(curves, "cluster_bootstrap_cis", counting)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        metric_curves(run.scores)
    finally:
        gc.enable()
    assert alive[0] - before < 200  # a few per cell (9 cells); was one per score and more
