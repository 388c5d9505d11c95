"""Faithfulness in conversation and the refusal figures: arithmetic against hand-computed cases (scripted judge
that reads its prompt) and their unscored cases."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from ragdive.evaluation import Evaluator, Judge
from ragdive.evaluation.metrics.single_turn.faithfulness_in_conversation import FaithfulnessInConversation
from ragdive.evaluation.metrics.single_turn.refusals import REFUSAL_METRICS
from ragdive.models import Message
from ragdive.records import Context, Conversation
from tests.factories import make_conversation

from .scripted_judge import scripted_judge, section

KETTLE = "The kettle switches off by itself after boiling."
CAPACITY = "The kettle holds 1.7 litres."


def restating_conversation() -> Conversation:
    """Turn 1 retrieves the auto-off fact; turn 2 retrieves something else and its answer restates turn 1's."""
    conv = make_conversation("c", turns=2)
    first = conv.turns[0].model_copy(update={"answer": KETTLE, "contexts": [Context(text=KETTLE)]})
    second = conv.turns[1].model_copy(
        update={"rag_input": "And does it switch off?", "answer": KETTLE, "contexts": [Context(text=CAPACITY)]}
    )
    return conv.model_copy(update={"turns": [first, second]})


def reading_judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    """Places the (one-claim) answer where its text occurs: this turn's contexts, an earlier turn's, nowhere."""
    prompt = messages[-1].content
    name = schema.__name__ if schema else ""
    answer = section(prompt, "ANSWER")
    current = section(prompt, "RETRIEVED CONTEXTS")
    if name == "FaithfulnessVerdict":
        return {"claims": [{"claim": answer, "reason": "r", "supported": answer in current}]}
    if name == "ConversationFaithfulnessVerdict":
        if answer in current:
            return {"claims": [{"claim": answer, "reason": "this turn", "support": "current_contexts"}]}
        earlier = re.findall(r"^CONTEXTS OF TURN (\d+):\n(.*?)^ASSISTANT:", prompt, re.S | re.M)
        for number, text in earlier:
            if answer in text:
                claim = {"claim": answer, "reason": "earlier", "support": "earlier_contexts", "turn": int(number)}
                return {"claims": [claim]}
        return {"claims": [{"claim": answer, "reason": "nowhere", "support": "none"}]}
    if name == "RefusalVerdict":
        refused = "not in the knowledge base" in answer
        return {"reason": "says so" if refused else "gives facts", "refused": refused}
    raise AssertionError(name)


async def test_turn_two_restating_turn_one_scores_0_faithful_and_1_in_conversation() -> None:
    model, backend = scripted_judge(reading_judge)
    scores = await Evaluator(Judge(model), ["faithfulness", "faithfulness_in_conversation"]).score_conversations(
        [restating_conversation()]
    )
    by = {(s.metric, s.turn_index): s for s in scores}
    assert by["faithfulness", 0].value == 1.0 and by["faithfulness_in_conversation", 0].value == 1.0
    assert by["faithfulness", 1].value == 0.0
    second = by["faithfulness_in_conversation", 1]
    assert second.value == 1.0
    assert second.details["history_only_share"] == 1.0
    assert "1 by earlier contexts" in second.reason
    assert second.details["claims"][0]["turn"] == 1
    # the turn-2 prompt shows turn 1's contexts and answer
    asked = [c.text for c in backend.calls if "EARLIER TURNS" in c.text and "Turn 1" in c.text]
    assert asked and KETTLE in asked[0]


async def test_mixed_support_arithmetic_and_a_made_up_turn_counts_as_none() -> None:
    claims = [
        {"claim": "a", "reason": "r", "support": "current_contexts"},
        {"claim": "b", "reason": "r", "support": "earlier_answer", "turn": 1},
        {"claim": "c", "reason": "r", "support": "earlier_contexts", "turn": 7},  # no turn 7 before turn 2
        {"claim": "d", "reason": "r", "support": "none"},
    ]
    model, backend = scripted_judge(responder=None)
    backend.enqueue({"claims": claims})
    conv = restating_conversation()
    score = await FaithfulnessInConversation().score(Judge(model), conv, conv.turns[1])
    assert score.value == pytest.approx(2 / 4)
    assert score.details["history_only_share"] == pytest.approx(1 / 4)
    assert score.details["support"] == {"current_contexts": 1, "earlier_contexts": 0, "earlier_answer": 1, "none": 2}
    assert "unsupported: c; d" in score.reason


async def test_no_claims_a_failed_target_and_a_wrong_shape_are_unscored() -> None:
    model, backend = scripted_judge(responder=None)
    backend.enqueue(
        {"claims": []},
        {"reason": "r", "verdict": "yes"},
        {"reason": "r", "verdict": "yes"},
        {"reason": "r", "verdict": "yes"},
    )
    conv = restating_conversation()
    judge = Judge(model)
    empty = await FaithfulnessInConversation().score(judge, conv, conv.turns[1])
    assert empty.value is None and "no factual claim" in (empty.unscored_reason or "")
    failed_turn = conv.turns[1].model_copy(update={"answer": None, "error": "HTTP 500"})
    failed = await FaithfulnessInConversation().score(judge, conv, failed_turn)
    assert failed.value is None and "target failed" in (failed.unscored_reason or "")
    garbage = await FaithfulnessInConversation().score(judge, conv, conv.turns[1])
    assert garbage.value is None and garbage.details.get("judge_failed") is True


def probe_conversation(answers: list[str], probes: list[bool]) -> Conversation:
    conv = make_conversation("p", turns=len(answers))
    pairs = zip(conv.turns, answers, probes, strict=True)
    turns = [t.model_copy(update={"answer": a, "unanswerable": u}) for t, a, u in pairs]
    return conv.model_copy(update={"turns": turns})


async def test_refusal_figures_from_one_judgement_per_turn() -> None:
    no = "That is not in the knowledge base."
    # turns: probe refused, probe answered, answerable refused, answerable answered, answerable answered
    conv = probe_conversation([no, "It is blue.", no, "Yes.", "Two."], [True, True, False, False, False])
    model, backend = scripted_judge(reading_judge)
    scores = await Evaluator(Judge(model), list(REFUSAL_METRICS)).score_conversations([conv])
    assert len(backend.calls) == 5  # one judgement per turn, shared by the four metrics
    values = {m: [s.value for s in scores if s.metric == m] for m in REFUSAL_METRICS}
    assert values["refused"] == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert values["refusal_recall"] == [1.0, 0.0, None, None, None]  # 1 of 2 probes refused
    assert values["refusal_precision"] == [1.0, None, 0.0, None, None]  # 1 of 2 refusals a probe
    assert values["over_refusal"] == [None, None, 1.0, 0.0, 0.0]  # 1 of 3 answerable turns refused
    unscored = {s.unscored_reason for s in scores if s.value is None}
    assert any("counts the unanswerable probes only" in (r or "") for r in unscored)
    assert any("counts refusals only" in (r or "") for r in unscored)
    assert all(s.prompt_fingerprint for s in scores)


async def test_a_failed_refusal_judgement_leaves_every_figure_of_that_turn_unscored() -> None:
    conv = probe_conversation(["Blue."], [True])
    model, backend = scripted_judge(responder=None)
    backend.enqueue({"nonsense": 1}, {"nonsense": 1}, {"nonsense": 1}, {"nonsense": 1})
    scores = await Evaluator(Judge(model), ["refused", "refusal_recall"]).score_conversations([conv])
    assert all(s.value is None and s.details.get("judge_failed") for s in scores)


def test_the_new_metrics_are_opt_in() -> None:
    from ragdive.evaluation.metrics import configured_metrics

    defaults = configured_metrics(None)
    assert "faithfulness" in defaults
    assert not {"faithfulness_in_conversation", *REFUSAL_METRICS} & set(defaults)
