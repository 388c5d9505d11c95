"""pass^k on a planted pattern, by hand: document A passes in all 3 repeats, document B fails in exactly one.
A document with c passes in n repeats has pass^k = C(c, k) / C(n, k):
A: 1, 1, 1; B: 2/3, 1/3, 0 -> pass^1 = 5/6, pass^2 = 2/3, pass^3 = 1/2."""

from __future__ import annotations

import pytest

from ragdive.analysis.pass_k import conversation_passes, parse_thresholds, pass_k, thresholds_from_config
from ragdive.analysis.summary import RunScores
from ragdive.records import Score
from tests.factories import make_conversation


def run(repeat: int, b_correct: list[float], *, a_unscored: bool = False) -> RunScores:
    a = make_conversation(f"r{repeat}-a", turns=2, index=0).model_copy(update={"document_ids": ["doc-a"]})
    b = make_conversation(f"r{repeat}-b", turns=2, index=1).model_copy(update={"document_ids": ["doc-b"]})
    scores = [Score(conversation_id=b.id, turn_index=i, metric="correctness", value=v) for i, v in enumerate(b_correct)]
    for i in range(2):
        if a_unscored:
            scores.append(Score.unscored(conversation_id=a.id, turn_index=i, metric="correctness", reason="judge"))
        else:
            scores.append(Score(conversation_id=a.id, turn_index=i, metric="correctness", value=1.0))
    scores += [Score(conversation_id=c.id, metric="forgetfulness", value=0.0) for c in (a, b)]
    return RunScores(f"r{repeat}", [a, b], scores)


def test_the_hand_computed_curve_of_a_document_that_fails_once_in_three() -> None:
    runs = [run(0, [1.0, 1.0]), run(1, [1.0, 0.0]), run(2, [1.0, 1.0])]
    thresholds = parse_thresholds({"correctness": ">= 0.75", "forgetfulness": "<= 0"})
    result = pass_k(runs, thresholds)
    assert result.k == [1, 2, 3]
    assert result.values == pytest.approx([5 / 6, 2 / 3, 1 / 2])
    assert result.n_documents == [2, 2, 2]
    assert result.per_document == {"doc-a": (3, 3), "doc-b": (2, 3)}
    # the turn mean of the failing repeat is 0.5: a mean threshold of 0.5 passes it, "each" does not
    lenient = pass_k(runs, parse_thresholds({"correctness": ">= 0.5"}))
    assert lenient.values == [1.0, 1.0, 1.0]
    strict = pass_k(runs, parse_thresholds({"correctness": "> 0.5 per turn"}))
    assert strict.values == pytest.approx([5 / 6, 2 / 3, 1 / 2])


def test_an_unscored_outcome_is_left_out_not_failed() -> None:
    runs = [run(0, [1.0, 1.0], a_unscored=True), run(1, [1.0, 0.0]), run(2, [1.0, 1.0])]
    result = pass_k(runs, parse_thresholds({"correctness": ">= 0.75"}))
    assert result.undetermined == 1
    assert result.per_document["doc-a"] == (2, 2)
    # k = 3: only doc-b has three determined repeats, and it failed one
    assert result.n_documents == [2, 2, 1]
    assert result.values == pytest.approx([(1 + 2 / 3) / 2, (1 + 1 / 3) / 2, 0.0])


def test_threshold_syntax_and_where_thresholds_come_from() -> None:
    assert [str(t) for t in parse_thresholds({"correctness": ">= .9 per turn"})] == ["correctness >= 0.9 per turn"]
    with pytest.raises(ValueError, match="cannot read gate rule"):
        parse_thresholds({"correctness": "at least 0.9"})
    # a gate's "in at least K of N repeats" is its own rule over run means: pass^k reads the threshold
    assert [str(t) for t in parse_thresholds({"correctness": ">= 0.9 in at least 4 of 5 repeats"})] == [
        "correctness >= 0.9"
    ]
    assert conversation_passes([], parse_thresholds({"correctness": ">= 0.5"})) is None
    assert [str(t) for t in thresholds_from_config({"evaluation": {"gate": {"faithfulness": "> 0.7"}}})] == [
        "faithfulness > 0.7"
    ]
    config = {"evaluation": {"pass_thresholds": {"correctness": ">= 1"}, "gate": {"faithfulness": "> 0.7"}}}
    assert [t.metric for t in thresholds_from_config(config)] == ["correctness"]
    assert thresholds_from_config({"evaluation": {}}) == []
