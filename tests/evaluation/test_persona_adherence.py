"""persona_adherence: does every simulated user message behave as its persona says? (simulator fidelity)"""

from __future__ import annotations

from ragdive.evaluation.metrics import resolve_metrics
from ragdive.evaluation.metrics.multi_turn.persona_adherence import PersonaAdherence
from tests.factories import make_conversation

from .test_multi_turn import judge_with


async def test_violations_are_placed_on_turns_and_the_persona_is_in_the_prompt() -> None:
    conv = make_conversation(turns=3).model_copy(update={"persona": "skeptical"})
    violation = {"turn": 2, "rule": "When the previous answer was wrong, point out what is wrong"}
    judge, backend = judge_with(
        {"reason": "turn 2 lets a wrong answer pass", "violations": [violation], "adherent": False},
        {"reason": "fine", "violations": [], "adherent": True},
        {"reason": "odd", "violations": [violation], "adherent": True},
    )
    score = await PersonaAdherence().score(judge, conv)
    assert score.value == 0.0 and score.details["violations"] == [{"turn": 1, "rule": violation["rule"]}]
    prompt = backend.calls[0].text
    assert "A doubtful user who challenges answers" in prompt and "--- Turn 3\nUSER: " in prompt
    assert (await PersonaAdherence().score(judge, conv)).value == 1.0
    assert (await PersonaAdherence().score(judge, conv)).details["inconsistent"] is True


async def test_a_persona_that_is_not_built_in_is_unscored_with_the_reason() -> None:
    judge, backend = judge_with()
    score = await PersonaAdherence().score(judge, make_conversation(turns=2).model_copy(update={"persona": "mine"}))
    assert score.value is None and "not a built-in one" in score.unscored_reason and backend.calls == []


def test_persona_adherence_is_opt_in() -> None:
    _, conversation_metrics = resolve_metrics(None)
    assert "persona_adherence" not in [m.name for m in conversation_metrics]
    _, chosen = resolve_metrics(["persona_adherence"])
    assert [m.name for m in chosen] == ["persona_adherence"]
