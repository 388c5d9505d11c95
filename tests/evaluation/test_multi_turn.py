from __future__ import annotations

from ragdive.errors import ModelOutputError
from ragdive.evaluation import Judge
from ragdive.evaluation.metrics.multi_turn import ContextRetention, Forgetfulness
from tests.factories import make_conversation

from .scripted_judge import scripted_judge


def judge_with(*outputs: object):
    model, backend = scripted_judge(responder=None)
    backend.enqueue(*outputs)
    return Judge(model), backend


async def test_forgetfulness_attributes_the_lost_information_to_turns() -> None:
    # the judge reads and writes turn numbers from 1 (as the report shows them); details keep 0-based indices
    lost = [
        {"turn": 4, "refers_to_turn": 2, "information": "the user's name"},
        {"turn": 8, "refers_to_turn": 2, "information": "made up turn"},
        {"turn": 1, "refers_to_turn": 0, "information": "a turn 0 that is not shown"},
    ]
    judge, backend = judge_with({"reason": "turn 4 ignores turn 2", "lost": lost, "forgot": True})
    conv = make_conversation(turns=4)
    score = await Forgetfulness().score(judge, conv)
    assert score.value == 1.0 and score.turn_index is None
    assert score.details["lost"] == [{"turn": 3, "refers_to_turn": 1, "information": "the user's name"}]
    assert score.details["unplaced"] == [  # kept and shown, not silently dropped
        {"turn": 7, "refers_to_turn": 1, "information": "made up turn"},
        {"turn": 0, "refers_to_turn": -1, "information": "a turn 0 that is not shown"},
    ]
    prompt = backend.calls[0].text
    assert "--- Turn 1\nUSER: " in prompt and "--- Turn 4\nUSER: " in prompt and "--- Turn 0" not in prompt
    assert "ASSISTANT: reply 3" in prompt


async def test_context_retention_and_inconsistent_verdict_flagged() -> None:
    judge, _ = judge_with(
        {"reason": "kept", "lost": [], "retained": True},
        {"reason": "odd", "lost": [{"turn": 2, "refers_to_turn": 1, "information": "x"}], "retained": True},
    )
    conv = make_conversation(turns=2)
    ok = await ContextRetention().score(judge, conv)
    odd = await ContextRetention().score(judge, conv)
    assert ok.value == 1.0 and ok.details == {"lost": []}
    assert odd.value == 1.0 and odd.details["inconsistent"] is True


async def test_multi_turn_unscored_cases() -> None:
    judge, backend = judge_with(ModelOutputError("bad", raw="{"))
    one_turn = await Forgetfulness().score(judge, make_conversation(turns=1))
    assert one_turn.value is None and "fewer than two turns" in one_turn.unscored_reason
    assert backend.calls == []
    conv = make_conversation(turns=3)
    conv.turns[1] = conv.turns[1].model_copy(update={"answer": None, "error": "timeout"})
    failed = await Forgetfulness().score(judge, conv)
    assert failed.value is None and "judge output unusable" in failed.unscored_reason
    assert "(no answer: the system failed)" in backend.calls[0].text
