"""The conversation analyses on hand-built records whose answers are known by construction."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ragdive.analysis.conversations import (
    LapseStats,
    RunRecords,
    analyse_groups,
    lapse_stats,
    metric_curves,
    question_flow,
    question_uniqueness,
    rejection_stats,
    to_data,
)
from ragdive.records import Attempt, Conversation, Rejection, Score, Verdict
from tests.factories import make_conversation, make_draft


def typed(cid: str, types: list[str], *, docs: list[str] | None = None, persona: str = "precise") -> Conversation:
    c = make_conversation(cid, turns=len(types))
    for turn, qtype in zip(c.turns, types, strict=True):
        turn.question_type = qtype  # type: ignore[assignment]
    c.persona = persona
    if docs is not None:
        c.document_ids = docs
    return c


def asking(cid: str, questions: list[str], docs: list[str]) -> Conversation:
    c = make_conversation(cid, turns=len(questions))
    c.document_ids = docs
    for turn, q in zip(c.turns, questions, strict=True):
        turn.standalone_question = q
    return c


def test_flow_counts_turns_from_one_with_every_type_listed() -> None:
    convs = [
        typed("a", ["initial", "follow-up", "follow-up"]),
        typed("b", ["initial", "clarification", "follow-up"]),
        typed("c", ["initial", "follow-up", "correction"]),
    ]
    flow = question_flow(convs)
    assert sorted(flow.per_turn) == [1, 2, 3]
    assert flow.per_turn[1].counts["initial"] == 3 and flow.per_turn[1].shares["initial"] == 1.0
    assert flow.per_turn[2].counts == {
        "initial": 0,
        "follow-up": 2,
        "clarification": 1,
        "correction": 0,
        "comparative": 0,
    }
    assert flow.overall.n == 9 and flow.overall.counts["follow-up"] == 4
    assert flow.after_first.n == 6 and flow.after_first.shares["follow-up"] == pytest.approx(4 / 6)
    assert flow.after_first.shares["comparative"] == 0.0


def test_uniqueness_exact_counts_unique_and_distinct_per_seed_set_and_turn() -> None:
    convs = [
        asking("r1", ["Who directed it?", "When was it made?"], ["d1"]),
        asking("r2", ["who directed it", "Who produced it?"], ["d1"]),
        asking("r3", ["What is it about?", "When was it made?"], ["d1"]),
        asking("x1", ["Who directed it?"], ["d2"]),  # alone on its documents: nothing to compare
    ]
    u = question_uniqueness(convs)
    assert (u.method, u.seed_sets, u.single_seed_sets) == ("exact", 1, 1)
    # turn 1: r1 and r2 ask the same (case and '?' ignored), r3 differs
    assert (u.per_turn[1].questions, u.per_turn[1].unique, u.per_turn[1].distinct) == (3, 1, 2)
    assert (u.per_turn[2].questions, u.per_turn[2].unique, u.per_turn[2].distinct) == (3, 1, 2)
    assert u.per_turn[1].share == pytest.approx(1 / 3)
    assert u.average_share == pytest.approx(1 / 3)


def test_exact_uniqueness_counted_without_the_matrix_agrees_with_it() -> None:
    from ragdive.analysis.conversations.uniqueness import _components, _exact_counts, _same_matrix

    rng = np.random.default_rng(3)
    words = ["Who directed it?", "who directed it", "When was it made", "What is it about?", "WHEN  was it made?"]
    for size in (1, 2, 5, 40):
        questions = [words[i] for i in rng.integers(0, len(words), size)] + [f"only {size}"]
        same = _same_matrix(questions, {}, None)
        assert _exact_counts(questions) == (int(np.sum(same.sum(axis=1) == 1)), _components(same))


def test_uniqueness_embedding_uses_the_threshold_and_joins_chains_into_one_question() -> None:
    # 2-d vectors at chosen angles: a~b and b~c are above 0.95, a~c is not, so nothing is unique and the
    # chain a-b-c is one distinct question; d is far from all
    angles = {"a": 0.0, "b": 0.25, "c": 0.5, "d": 1.5}

    def embed(texts: list[str]) -> np.ndarray:
        return np.array([[np.cos(angles[t]), np.sin(angles[t])] for t in texts]) * 3.0  # not normalised on purpose

    convs = [asking(f"r{i}", [q], ["d1"]) for i, q in enumerate("abcd")]
    u = question_uniqueness(convs, embed, threshold=0.95)
    assert (u.method, u.threshold) == ("embedding", 0.95)
    assert (u.per_turn[1].unique, u.per_turn[1].distinct, u.per_turn[1].questions) == (1, 2, 4)


def test_seed_sets_ignore_document_order() -> None:
    u = question_uniqueness([asking("a", ["q1"], ["d1", "d2"]), asking("b", ["q2"], ["d2", "d1"])])
    assert u.seed_sets == 1 and u.per_turn[1].unique == 2


def test_rejections_by_category_turn_attempt_and_acceptance() -> None:
    first = make_conversation("c1", turns=3)
    first.turns[1].attempts.insert(
        0, Attempt(draft=make_draft(1), verdict=Verdict(valid=False, failed_checks=["not_standalone"]))
    )
    first.turns[2].validator_overruled = True
    rejections = [
        Rejection(
            conversation_id="c1",
            turn_index=1,
            attempt=1,
            categories=["not_standalone"],
            reason="r",
            draft=make_draft(1),
        ),
        Rejection(
            conversation_id="c1",
            turn_index=2,
            attempt=1,
            categories=["not_standalone", "ground_truth_unsupported"],
            reason="r",
            draft=make_draft(2),
        ),
        Rejection(conversation_id="c1", turn_index=2, attempt=2, categories=[], reason="r", draft=make_draft(2)),
    ]
    stats = rejection_stats([first], rejections)
    assert stats.total == 3
    assert stats.by_category == {"not_standalone": 2, "ground_truth_unsupported": 1, "uncategorised": 1}
    assert stats.by_turn == {2: 1, 3: 2} and stats.by_attempt == {1: 2, 2: 1}
    cells = {(c.category, c.turn, c.attempt): c.count for c in stats.cells}
    assert cells == {
        ("ground_truth_unsupported", 3, 1): 1,
        ("not_standalone", 2, 1): 1,
        ("not_standalone", 3, 1): 1,
        ("uncategorised", 3, 2): 1,
    }
    a = stats.acceptance
    assert (a.turns, a.first_try, a.overruled) == (3, 1, 1)
    assert a.first_try_rate == pytest.approx(1 / 3) and a.overruled_share == pytest.approx(1 / 3)
    assert stats.acceptance_per_turn[3].overruled == 1 and stats.acceptance_per_turn[1].first_try == 1


def lost(*pairs: tuple[int, int]) -> list[dict[str, object]]:
    return [{"turn": t, "refers_to_turn": r, "information": "x"} for t, r in pairs]


def test_lapses_by_turn_and_distance_back() -> None:
    scores = [
        Score(conversation_id="a", metric="forgetfulness", value=1.0, details={"lost": lost((2, 0), (3, 2))}),
        Score(
            conversation_id="b",
            metric="forgetfulness",
            value=1.0,
            details={"lost": lost((2, 1)), "unplaced": lost((9, 1)), "inconsistent": True},
        ),
        Score(conversation_id="c", metric="forgetfulness", value=0.0, details={"lost": []}),
        Score.unscored(conversation_id="d", metric="forgetfulness", reason="judge failed"),
        Score(conversation_id="a", metric="context_retention", value=0.0, details={"lost": lost((4, 0))}),
        Score(conversation_id="a", turn_index=0, metric="faithfulness", value=1.0),
    ]
    out = lapse_stats(scores)
    f = out["forgetfulness"]
    assert f == LapseStats(
        metric="forgetfulness",
        scored=3,
        unscored=1,
        with_lapse=2,
        lapses=3,
        by_turn={3: 2, 4: 1},
        by_distance={1: 2, 2: 1},
        unplaced=1,
        inconsistent=1,
    )
    assert out["context_retention"].by_turn == {5: 1} and out["context_retention"].by_distance == {4: 1}


def test_curves_per_turn_with_n_and_ci() -> None:
    scores = [
        Score(conversation_id=f"c{i}", turn_index=t, metric="correctness", value=v)
        for i, row in enumerate([[1.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
        for t, v in enumerate(row)
    ] + [
        Score.unscored(conversation_id="c3", turn_index=1, metric="correctness", reason="no answer"),
        Score(conversation_id="c0", metric="forgetfulness", value=1.0),
    ]
    curves = metric_curves(scores)
    assert list(curves) == ["correctness"]
    t1, t2 = curves["correctness"]
    assert (t1.turn, t1.mean, t1.n, t1.n_unscored, t1.ci) == (1, 1.0, 3, 0, (1.0, 1.0))
    assert (t2.turn, t2.n, t2.n_unscored) == (2, 3, 1) and t2.mean == pytest.approx(1 / 3)
    assert t2.ci is not None and t2.ci[0] <= t2.mean <= t2.ci[1]


def test_groups_by_persona_and_plain_data() -> None:
    run = RunRecords("r", [typed("a", ["initial", "follow-up"], persona="p1"), typed("b", ["initial"], persona="p2")])
    groups = analyse_groups([run], by="persona")
    assert list(groups) == ["all", "p1", "p2"]
    assert groups["p1"].flow.overall.n == 2 and groups["p2"].conversations == 1
    data = to_data(groups)
    assert data["all"]["flow"]["per_turn"]["2"]["counts"]["follow-up"] == 1


def test_the_analyses_import_without_the_model_layer() -> None:
    script = (
        "import sys\n"
        "for name in ('ragdive.models', 'ragdive.evaluation', 'ragdive.cli', 'ragdive.simulation'):\n"
        "    sys.modules[name] = None\n"
        "import ragdive.analysis.conversations as c\n"
        "assert c.question_flow([]).overall.n == 0\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_uniqueness_judge_method_asks_each_pair_of_different_texts_once() -> None:
    asked: list[tuple[str, str]] = []

    def judge(pairs: list[tuple[str, str]]) -> list[bool | None]:
        asked.extend(pairs)
        return [None if "?" in a + b else a[0] == b[0] for a, b in pairs]

    convs = [asking("r1", ["apple"], ["d1"]), asking("r2", ["avocado"], ["d1"]), asking("r3", ["Apple"], ["d1"])]
    convs += [asking("s1", ["kiwi?"], ["d2"]), asking("s2", ["lime"], ["d2"])]
    u = question_uniqueness(convs, judge_pairs=judge)
    # "apple" and "Apple" are equal text (never asked); the judge joins apple~avocado, so d1 is one question; the
    # d2 pair is undecided, so counted as two
    assert sorted(asked) == [("Apple", "avocado"), ("apple", "avocado"), ("kiwi?", "lime")]
    assert (u.method, u.per_turn[1].unique, u.per_turn[1].distinct, u.undecided_pairs) == ("judge", 2, 3, 1)
    with pytest.raises(ValueError, match="one method"):
        question_uniqueness(convs, lambda texts: np.ones((len(texts), 2)), judge_pairs=judge)
