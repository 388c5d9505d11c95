from __future__ import annotations

import pytest

from ragdive.errors import ModelError, TargetError
from ragdive.records import TargetReply
from ragdive.simulation import DialogueSettings, Generator, Validator, run_dialogue
from ragdive.targets import DialogueState, Target

from .helpers import EchoTarget, fabricated_draft, good_draft, plan, user_model, validator_model

REJECT = {"reason": "The stand-alone question still says 'it'.", "failed_checks": ["not_standalone"], "valid": False}


async def simulate(user, validator, *, target=None, persona="precise", **settings):  # type: ignore[no-untyped-def]
    return await run_dialogue(
        plan(persona),
        generator=Generator(user),
        validator=Validator(validator),
        target=target or EchoTarget(),
        settings=DialogueSettings(**{"max_turns": 1, **settings}),
    )


async def test_a_rejected_draft_is_redrafted_with_the_critique_and_validated_again() -> None:
    user, user_calls = user_model()
    validator, validator_calls = validator_model(REJECT)  # first verdict rejects, then the responder accepts
    result = await simulate(user, validator)

    turn = result.conversation.turns[0]
    assert [a.verdict.valid for a in turn.attempts] == [False, True]
    assert len(user_calls.calls) == 2 and len(validator_calls.calls) == 2
    redraft = user_calls.calls[1].messages
    # the rejected draft comes back as the model's own answer, followed by the critique and the failed check
    assert redraft[-2].role == "assistant" and turn.attempts[0].draft.rag_input in redraft[-2].content
    assert "The stand-alone question still says 'it'." in redraft[-1].content
    assert "not_standalone" in redraft[-1].content
    assert "The stand-alone question" not in user_calls.calls[0].text
    assert not turn.validator_overruled and result.conversation.status == "finished"
    [rejection] = result.rejections
    assert rejection.categories == ["not_standalone"] and rejection.attempt == 1 and rejection.checked_by == "llm"


@pytest.mark.parametrize("max_attempts", [1, 3])
async def test_max_attempts_then_accept_marks_the_turn_overruled(max_attempts: int) -> None:
    user, user_calls = user_model()
    validator, _ = validator_model(responder=lambda m: REJECT)
    result = await simulate(user, validator, max_attempts=max_attempts, on_exhausted="accept")
    turn = result.conversation.turns[0]
    assert len(user_calls.calls) == max_attempts and len(turn.attempts) == max_attempts
    assert turn.validator_overruled and turn.rag_input == turn.attempts[-1].draft.rag_input
    assert turn.answer is not None  # the overruled draft was still sent to the target
    assert len(result.rejections) == max_attempts


async def test_max_attempts_then_end_ends_the_conversation_early() -> None:
    user, user_calls = user_model()
    validator, _ = validator_model(responder=lambda m: REJECT)
    target = EchoTarget()
    result = await simulate(user, validator, target=target, max_attempts=2, on_exhausted="end", max_turns=3)
    assert result.conversation.status == "ended_early" and result.conversation.turns == []
    assert "rejected every draft" in (result.conversation.end_reason or "")
    assert len(user_calls.calls) == 2 and target.calls == []
    assert [r.attempt for r in result.rejections] == [1, 2]


async def test_fabricated_evidence_is_caught_without_calling_the_validator_model() -> None:
    user, _ = user_model(fabricated_draft)
    validator, validator_calls = validator_model()
    result = await simulate(user, validator, max_attempts=2)
    assert validator_calls.calls == []
    assert all(r.categories == ["evidence_not_in_document"] for r in result.rejections)
    assert all(r.checked_by == "deterministic" for r in result.rejections)
    assert result.conversation.turns[0].validator_overruled


async def test_a_question_naming_the_document_is_caught_without_calling_the_validator_model() -> None:
    def naming(messages, schema):  # type: ignore[no-untyped-def]
        draft = good_draft(messages)
        draft["rag_input"] = draft["standalone_question"] = "According to the document, when was the harbour built?"
        return draft

    user, _ = user_model(naming)
    validator, validator_calls = validator_model()
    result = await simulate(user, validator, max_attempts=1, on_exhausted="end")
    assert validator_calls.calls == []
    assert result.rejections[0].categories == ["document_mentioned"]


async def test_unreadable_drafts_are_failed_attempts_not_crashes() -> None:
    # one unreadable answer is repaired by the model layer's corrective retry: not a failed attempt
    user, user_calls = user_model()
    user_calls.enqueue("this is not json")
    validator, _ = validator_model()
    result = await simulate(user, validator, max_attempts=3)
    assert result.conversation.turns[0].generation_errors == [] and len(user_calls.calls) == 2

    # unreadable twice in a row (answer and corrective retry): a ModelOutputError, recorded as a failed attempt
    user, user_calls = user_model()
    user_calls.enqueue("this is not json", {"rag_input": "missing fields"})
    result = await simulate(user, validator, max_attempts=3)
    turn = result.conversation.turns[0]
    assert len(turn.generation_errors) == 1 and len(turn.attempts) == 1 and turn.attempts[0].verdict.valid
    assert "DraftOutput" in turn.generation_errors[0]
    # the generator saw its unreadable answer and was asked again for the JSON object
    redraft = user_calls.calls[2]
    assert "missing fields" in redraft.text and "valid JSON object" in redraft.text

    user, user_calls = user_model()
    user_calls.enqueue(*["garbage"] * 4)
    result = await simulate(user, validator, max_attempts=2, on_exhausted="accept")
    assert result.conversation.status == "ended_early"
    assert "no readable draft (2 unreadable draft(s)" in result.conversation.end_reason


async def test_an_unreadable_validator_answer_rejects_the_draft() -> None:
    user, _ = user_model()
    validator, _ = validator_model("not a verdict", "still not a verdict")
    result = await simulate(user, validator, max_attempts=2)
    assert [a.verdict.valid for a in result.conversation.turns[0].attempts] == [False, True]
    assert "could not be read" in result.rejections[0].reason and result.rejections[0].categories == []


async def test_turns_react_to_the_targets_answers_and_history_is_windowed() -> None:
    user, user_calls = user_model()
    validator, _ = validator_model()
    target = EchoTarget()
    result = await run_dialogue(
        plan("attentive"),
        generator=Generator(user, history_window=2),
        validator=Validator(validator),
        target=target,
        settings=DialogueSettings(max_turns=4),
    )
    conv = result.conversation
    assert [t.index for t in conv.turns] == [0, 1, 2, 3] and conv.status == "finished"
    assert [t.question_type for t in conv.turns] == ["initial", "follow-up", "follow-up", "follow-up"]
    assert [n for _, _, n in target.calls] == [0, 2, 4, 6]  # the target got the growing history
    last_prompt = user_calls.calls[-1].messages[1].content
    assert conv.turns[2].answer in last_prompt  # the target's last answer is shown to the generator
    assert conv.turns[0].answer not in last_prompt and "1 earlier turn not shown" in last_prompt
    assert conv.turns[3].usage["user"].prompt_tokens > 0 and "validator" in conv.turns[3].usage


async def test_unanswerable_probes_ask_for_the_fixed_ground_truth() -> None:
    def probe_aware(messages, schema):  # type: ignore[no-untyped-def]
        draft = good_draft(messages)
        if "unanswerable probe" in messages[1].content:
            draft.update(ground_truth="not in the knowledge base", evidence=[])
        return draft

    user, _ = user_model(probe_aware)
    validator, _ = validator_model()
    result = await simulate(user, validator, max_turns=3, unanswerable_rate=1.0)
    turns = result.conversation.turns
    assert [t.unanswerable for t in turns] == [False, True, True]  # never the opening turn
    assert all(t.ground_truth == "not in the knowledge base" for t in turns[1:])


class FailingTarget(Target):
    def __init__(self, fail_on: int, exc: Exception) -> None:
        self.fail_on, self.exc, self.n = fail_on, exc, 0

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        self.n += 1
        if self.n == self.fail_on:
            raise self.exc
        return TargetReply(answer="ok")


async def test_a_target_error_is_kept_on_the_turn_and_ends_the_conversation() -> None:
    user, _ = user_model()
    validator, _ = validator_model()
    target = FailingTarget(2, TargetError("HTTP 503 from target", status=503))
    result = await simulate(user, validator, target=target, max_turns=4)
    conv = result.conversation
    assert conv.status == "ended_early" and len(conv.turns) == 2
    assert conv.turns[1].error == "HTTP 503 from target" and conv.turns[1].answer is None
    assert "target failed on turn 2" in conv.end_reason


async def test_other_errors_are_recorded_on_the_conversation() -> None:
    def down_after_one_turn(messages, schema):  # type: ignore[no-untyped-def]
        if "Write turn 2" in messages[1].content:
            raise ModelError("provider down after retries", status=503)
        return good_draft(messages)

    user, _ = user_model(down_after_one_turn)
    validator, _ = validator_model()
    result = await simulate(user, validator, max_turns=3)
    conv = result.conversation
    assert conv.status == "error" and conv.error == "ModelError: provider down after retries"
    assert len(conv.turns) == 1 and conv.turns[0].answer  # the finished turn is kept


async def test_a_draft_that_is_blank_after_stripping_is_rejected_and_replayed() -> None:
    def blank(messages, schema):  # type: ignore[no-untyped-def]
        return {**good_draft(messages), "rag_input": "   ", "standalone_question": " "}

    user, user_calls = user_model(blank)
    validator, validator_calls = validator_model()
    result = await simulate(user, validator, max_attempts=2, on_exhausted="end")
    assert result.rejections[0].categories == ["question_inconsistent"] and validator_calls.calls == []
    assert '"rag_input": ""' in user_calls.calls[1].messages[-2].content
    assert result.conversation.status == "ended_early"


async def test_the_draft_schema_asks_for_evidence_except_in_probes() -> None:
    user, user_calls = user_model()
    validator, _ = validator_model()
    await simulate(user, validator, max_turns=2, unanswerable_rate=1.0)
    first, probe = (call.schema.model_json_schema() for call in (user_calls.calls[0], user_calls.calls[-1]))
    assert first["properties"]["evidence"]["minItems"] == 1
    assert "minItems" not in probe["properties"]["evidence"]


def test_system_prompts_rendered_once_per_persona_are_the_same_text_as_rendered_each_time() -> None:
    """The generator's and validator's system prompts depend on the persona alone: the cached render equals a fresh
    one, a changed persona gets its own, and a persona changed in place is not served the old text."""
    from ragdive.records import Persona
    from ragdive.simulation._prompts import render, system_prompt
    from ragdive.simulation.checks import CHECK_DESCRIPTIONS

    persona = Persona(name="p", description="A careful reader.", instructions=["Ask short questions."])
    checks = [(str(c), d) for c, d in CHECK_DESCRIPTIONS.items()]
    assert system_prompt("generator_system.md", persona) == render("generator_system.md", persona=persona)
    assert system_prompt("validator_system.md", persona, checks) == render(
        "validator_system.md", persona=persona, checks=checks
    )
    persona.instructions.append("Never say thanks.")
    assert "Never say thanks." in system_prompt("generator_system.md", persona)
