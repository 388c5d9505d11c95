"""Each single-turn formula against hand-computed cases, and the unscored policy."""

from __future__ import annotations

import pytest

from ragdive.errors import ModelError
from ragdive.evaluation import Judge
from ragdive.evaluation.metrics.single_turn import (
    ContextPrecision,
    ContextRecall,
    Correctness,
    Faithfulness,
    average_precision,
)
from ragdive.records import Context
from tests.factories import make_conversation

from .scripted_judge import scripted_judge


def judge_with(*outputs: object) -> tuple[Judge, object]:
    model, backend = scripted_judge(responder=None)
    backend.enqueue(*outputs)
    return Judge(model), backend


def turn_with(k: int = 4, **update: object):
    conv = make_conversation(turns=1)
    contexts = [Context(text=f"passage number {i}") for i in range(1, k + 1)]
    turn = conv.turns[0].model_copy(update={"contexts": contexts, **update})
    return conv, turn


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([1, 0, 1], (1 / 1 + 2 / 3) / 2),
        ([0, 1, 1], (1 / 2 + 2 / 3) / 2),
        ([0, 0, 1], 1 / 3),
        ([1, 1, 0, 0], 1.0),
        ([0, 0, 0, 1, 0, 0, 0, 0, 0, 1], (1 / 4 + 2 / 10) / 2),
        ([0, 0, 0], 0.0),
    ],
)
def test_average_precision_hand_computed(flags: list[int], expected: float) -> None:
    assert average_precision([bool(f) for f in flags]) == pytest.approx(expected)


async def test_context_precision_one_batched_call_ranks_out_of_order() -> None:
    judge, backend = judge_with(
        {
            "verdicts": [
                {"rank": 4, "reason": "r", "relevant": True},
                {"rank": 1, "reason": "r", "relevant": False},
                {"rank": 3, "reason": "r", "relevant": False},
                {"rank": 2, "reason": "r", "relevant": True},
            ]
        }
    )
    conv, turn = turn_with(4)
    score = await ContextPrecision().score(judge, conv, turn)
    assert score.value == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert len(backend.calls) == 1  # all k contexts in ONE call
    assert all(f"[{i}] passage number {i}" in backend.calls[0].text for i in range(1, 5))
    assert [v["rank"] for v in score.details["relevance"]] == [1, 2, 3, 4]


async def test_context_precision_incomplete_verdicts_unscored() -> None:
    judge, _ = judge_with(
        {"verdicts": [{"rank": 1, "reason": "r", "relevant": True}, {"rank": 2, "reason": "r", "relevant": True}]}
    )
    conv, turn = turn_with(3)
    score = await ContextPrecision().score(judge, conv, turn)
    assert score.value is None and "expected exactly 1..3" in score.unscored_reason


async def test_faithfulness_supported_claims_over_claims() -> None:
    claims = [{"claim": c, "reason": "r", "supported": s} for c, s in (("a", True), ("b", True), ("c", False))]
    judge, _ = judge_with({"claims": claims})
    conv, turn = turn_with()
    score = await Faithfulness().score(judge, conv, turn)
    assert score.value == pytest.approx(2 / 3)
    assert "unsupported: c" in score.reason


async def test_faithfulness_zero_claims_is_unscored_not_one_or_zero() -> None:
    judge, _ = judge_with({"claims": []})
    conv, turn = turn_with(answer="I don't know.")
    score = await Faithfulness().score(judge, conv, turn)
    assert score.value is None and "no factual claim" in score.unscored_reason


async def test_judge_garbage_and_model_error_are_unscored_with_reason() -> None:
    # garbage twice: the model layer repairs, then retries once with a correction, then gives up
    judge, _ = judge_with("this is not json at all", "still not json", ModelError("HTTP 503 after 4 retries"))
    conv, turn = turn_with()
    garbage = await Faithfulness().score(judge, conv, turn)
    failed = await Correctness().score(judge, conv, turn)
    assert garbage.value is None and "judge output unusable" in garbage.unscored_reason
    assert "still not json" in garbage.unscored_reason
    assert failed.value is None and "503" in failed.unscored_reason
    assert judge.failures == 2


async def test_context_recall_attributed_statements() -> None:
    statements = [
        {"statement": s, "reason": "r", "attributed": a}
        for s, a in (("w", True), ("x", False), ("y", False), ("z", False))
    ]
    judge, _ = judge_with({"statements": statements}, {"statements": []})
    conv, turn = turn_with()
    assert (await ContextRecall().score(judge, conv, turn)).value == pytest.approx(0.25)
    empty = await ContextRecall().score(judge, conv, turn)
    assert empty.value is None and "no statement" in empty.unscored_reason


async def test_correctness_binary_against_ground_truth() -> None:
    judge, backend = judge_with({"reason": "same year", "correct": True}, {"reason": "wrong", "correct": False})
    conv, turn = turn_with(ground_truth="1492", answer="In 1492.")
    assert (await Correctness().score(judge, conv, turn)).value == 1.0
    assert (await Correctness().score(judge, conv, turn)).value == 0.0
    assert "GROUND TRUTH:\n1492" in backend.calls[0].text


async def test_target_failure_is_unscored_without_a_judge_call() -> None:
    judge, backend = judge_with()
    conv, turn = turn_with(0, answer=None, error="HTTP 500 from target")
    for metric in (Faithfulness(), ContextPrecision(), ContextRecall(), Correctness()):
        score = await metric.score(judge, conv, turn)
        assert score.value is None and "HTTP 500 from target" in score.unscored_reason
    assert backend.calls == []


async def test_no_contexts_unscores_context_metrics_but_not_correctness() -> None:
    judge, _ = judge_with({"reason": "ok", "correct": True})
    conv, turn = turn_with(0)
    for metric in (Faithfulness(), ContextPrecision(), ContextRecall()):
        score = await metric.score(judge, conv, turn)
        assert score.unscored_reason == "the target reported no retrieved contexts"
    assert (await Correctness().score(judge, conv, turn)).value == 1.0


async def test_unanswerable_probe() -> None:
    judge, backend = judge_with({"reason": "declined", "correct": True})
    conv, turn = turn_with(unanswerable=True, ground_truth="not in the knowledge base", answer="I don't know.")
    for metric in (ContextPrecision(), ContextRecall()):
        score = await metric.score(judge, conv, turn)
        assert score.value is None and score.unscored_reason.startswith("unanswerable probe")
    assert (await Correctness().score(judge, conv, turn)).value == 1.0
    assert "deliberate probe" in backend.calls[0].text
