"""Statistics: unscored never averaged, groupings, and simulations with known truth (fixed seeds, vectorised)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdive.analysis import (
    RunScores,
    arrow_for,
    cluster_bootstrap_ci,
    cluster_totals,
    compare_configurations,
    paired_test,
    summarize_by,
    summarize_repeats,
    summarize_scores,
)
from ragdive.records import Conversation, Score
from tests.factories import make_conversation


def score(cid: str, metric: str, value: float | None, turn: int | None = 0) -> Score:
    if value is None:
        return Score.unscored(conversation_id=cid, metric=metric, reason="judge failed: x", turn_index=turn)
    return Score(conversation_id=cid, metric=metric, value=value, turn_index=turn)


def test_unscored_items_never_enter_the_mean() -> None:
    s = summarize_scores("m", [score("a", "m", 1.0), score("b", "m", 0.5), score("c", "m", None)])
    assert s.mean == 0.75 and s.n_scored == 2 and s.n_unscored == 1
    assert s.unscored_reasons == {"judge_failed": 1}  # grouped by kind, never by free text
    none = summarize_scores("m", [score("c", "m", None)])
    assert none.mean is None and none.n_unscored == 1


def test_summaries_by_turn_question_type_and_persona() -> None:
    convs: list[Conversation] = []
    for i, persona in enumerate(("precise", "skeptical")):
        conv = make_conversation(f"c{i}", turns=2).model_copy(update={"persona": persona})
        convs.append(conv)
    scores = [
        score("c0", "correctness", 1.0, 0),
        score("c0", "correctness", 0.0, 1),
        score("c1", "correctness", 1.0, 0),
        score("c1", "correctness", None, 1),
        score("c0", "forgetfulness", 1.0, None),
    ]
    run = RunScores("r", convs, scores)
    by_turn = summarize_by(run, "turn")
    assert by_turn["correctness"]["1"].mean == 1.0 and by_turn["correctness"]["2"].n_unscored == 1  # from 1
    assert "forgetfulness" not in by_turn
    by_type = summarize_by(run, "question_type")["correctness"]
    assert by_type["initial"].mean == 1.0 and by_type["follow-up"].mean == 0.0
    by_persona = summarize_by(run, "persona")
    assert by_persona["correctness"]["precise"].mean == 0.5 and by_persona["correctness"]["skeptical"].n_scored == 1
    assert by_persona["forgetfulness"]["precise"].mean == 1.0


def test_clustered_bootstrap_ci_covers_true_mean_at_nominal_rate() -> None:
    rng = np.random.default_rng(20260101)
    true_mean, clusters, per_cluster, reps = 0.6, 40, 4, 300
    covered = naive_covered = 0
    ids = np.repeat(np.arange(clusters), per_cluster)
    for _ in range(reps):
        # a strong conversation effect: turns of one conversation are correlated
        values = true_mean + np.repeat(rng.normal(0, 0.15, clusters), per_cluster) + rng.normal(0, 0.1, ids.size)
        low, high = cluster_bootstrap_ci(values, ids, n_resamples=500, seed=rng)
        covered += low <= true_mean <= high
        nlow, nhigh = cluster_bootstrap_ci(values, np.arange(ids.size), n_resamples=500, seed=rng)
        naive_covered += nlow <= true_mean <= nhigh
    coverage = covered / reps
    assert 0.90 <= coverage <= 0.99, coverage
    # resampling single turns ignores the correlation and covers clearly less often
    assert naive_covered / reps < coverage - 0.1


@pytest.mark.parametrize("clusters", [7, 300, 5000])
def test_cluster_bootstrap_matches_scipy_percentile_bootstrap(clusters: int) -> None:
    """The numpy resampling is scipy.stats.bootstrap's percentile method: the same interval for the same seed
    (5,000 clusters resample in several chunks)."""
    from scipy import stats

    rng = np.random.default_rng(clusters)
    ids = rng.integers(0, clusters, clusters * 3)
    values = rng.uniform(0, 1, ids.size)
    sums, counts = cluster_totals(values, ids)
    for seed in (0, 12345):
        expected = stats.bootstrap(
            (sums, counts),
            lambda s, c, axis=-1: np.sum(s, axis=axis) / np.sum(c, axis=axis),
            paired=True,
            vectorized=True,
            n_resamples=400,
            confidence_level=0.9,
            method="percentile",
            random_state=seed,
        ).confidence_interval
        got = cluster_bootstrap_ci(values, ids, confidence=0.9, n_resamples=400, seed=seed)
        assert got == pytest.approx((expected.low, expected.high), rel=1e-12)


def test_cluster_bootstrap_edge_cases() -> None:
    assert cluster_bootstrap_ci([0.5, 0.7], ["a", "a"]) is None  # one conversation: no interval
    assert cluster_bootstrap_ci([1.0, 1.0, 1.0], ["a", "b", "c"]) == (1.0, 1.0)


def test_paired_test_finds_planted_difference_and_not_a_null_one() -> None:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.4, 0.9, 80)
    planted = paired_test(base, base + 0.05 + rng.normal(0, 0.05, base.size), seed=1)
    null = paired_test(base, base + rng.normal(0, 0.05, base.size), seed=1)
    assert planted.verdict == "real" and planted.p_value < 0.01 and planted.effect_size > 0.5
    assert planted.ci[0] <= 0.05 <= planted.ci[1]
    assert null.verdict == "noise" and null.p_value > 0.05


def test_paired_test_error_rates_over_replications() -> None:
    rng = np.random.default_rng(11)
    reps, n = 120, 60
    false_pos = hits = 0
    for _ in range(reps):
        base = rng.uniform(0.4, 0.9, n)
        false_pos += paired_test(base, base + rng.normal(0, 0.08, n), n_resamples=999, seed=rng).p_value < 0.05
        hits += paired_test(base, base + 0.05 + rng.normal(0, 0.08, n), n_resamples=999, seed=rng).p_value < 0.05
    assert false_pos / reps <= 0.10  # about the nominal 5 %
    assert hits / reps >= 0.9


def test_paired_test_too_few_pairs() -> None:
    assert paired_test(np.array([0.5]), np.array([0.6])).verdict == "too few pairs"
    assert paired_test(np.array([]), np.array([])).n_pairs == 0


def test_arrows_mark_an_absolute_change_of_005_as_the_papers_table_5_does() -> None:
    # the paper's own pairs: no arrow for 0.67 -> 0.63 or 0.07 -> 0.10; arrows for 0.93 -> 0.88 and 0.97 -> 0.92
    assert arrow_for(0.67, 0.63) == "" and arrow_for(0.07, 0.10) == ""
    assert arrow_for(0.93, 0.88) == "↓" and arrow_for(0.97, 0.92) == "↓"
    assert arrow_for(0.80, 0.85) == "↑" and arrow_for(0.0, 0.1) == "↑" and arrow_for(None, 0.5) == ""


def test_few_pairs_can_never_be_real_so_they_are_not_called_noise() -> None:
    from ragdive.analysis.compare import smallest_p

    assert smallest_p(5) == pytest.approx(0.0625) and smallest_p(6) < 0.05
    five = paired_test(np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([0.9, 0.9, 0.9, 0.9, 0.9]))
    assert five.p_value is not None and five.p_value >= 0.05 and five.verdict == "too few pairs"
    equal = paired_test(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.1, 0.2, 0.3, 0.4]) + 0.1)
    assert equal.effect_size is None  # equal differences up to float noise: no d_z of 1e15


def _run(name: str, docs_values: dict[str, float], metric: str = "correctness") -> RunScores:
    convs, scores = [], []
    for i, (doc, value) in enumerate(docs_values.items()):
        conv = make_conversation(f"{name}-{i}", turns=1).model_copy(update={"document_ids": [doc]})
        convs.append(conv)
        scores.append(score(conv.id, metric, value))
    return RunScores(name, convs, scores)


def test_compare_configurations_band_star_arrow_and_pairing() -> None:
    docs = [f"d{i}" for i in range(30)]
    rng = np.random.default_rng(3)
    truth = dict(zip(docs, rng.uniform(0.5, 0.9, 30), strict=True))
    baseline = [_run(f"b{r}", {d: v + shift for d, v in truth.items()}) for r, shift in enumerate((-0.01, 0.0, 0.01))]
    better = [_run("c", {d: v + 0.1 for d, v in truth.items()})]
    same = [_run("s", {d: v + 0.005 for d, v in truth.items()})]
    (up,) = compare_configurations(baseline, better)
    (flat,) = compare_configurations(baseline, same)
    assert up.band is not None and up.band[1] - up.band[0] == pytest.approx(0.02)
    assert up.outside_band and up.arrow == "↑" and up.paired.n_pairs == 30 and up.paired.verdict == "real"
    assert up.change == pytest.approx(0.1) and up.better is True
    (worse,) = compare_configurations(baseline, better, lower_is_better={"correctness"})
    assert worse.arrow == "↑" and worse.better is False  # up on a lower-is-better metric is a regression
    assert not flat.outside_band and flat.arrow == ""
    rep = summarize_repeats(baseline)[0]
    assert rep.std == pytest.approx(0.01) and rep.min < rep.mean < rep.max and rep.ci is not None


def test_static_runs_pair_per_question_others_per_document() -> None:
    from ragdive.analysis.compare import pairing_for

    def static(name: str, values: list[float]) -> RunScores:
        convs = [
            make_conversation(f"static-{i:05d}", turns=1).model_copy(update={"document_ids": ["same-article"]})
            for i in range(len(values))
        ]
        scores = [score(c.id, "correctness", v) for c, v in zip(convs, values, strict=True)]
        return RunScores(name, convs, scores, kind="static")

    base = static("a", [0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    cand = static("b", [1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert pairing_for([base], [cand]) == "conversation"
    (row,) = compare_configurations([base], [cand])
    assert row.paired_on == "conversation" and row.paired.n_pairs == 6
    dynamic = RunScores("d", cand.conversations, cand.scores, kind="dynamic")
    (mixed,) = compare_configurations([base], [dynamic])
    assert mixed.paired_on == "documents" and mixed.paired.n_pairs == 1  # one shared article
