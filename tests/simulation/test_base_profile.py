"""The base prompt profile of the simulated user and the validator, with scripted models: the prompt files render
as few-shot transcripts, their examples are answers the grammar allows, and a conversation runs on them."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel

from ragdive.config.models import ModelSpec
from ragdive.models import Message, Model, ScriptedModel
from ragdive.models.prompting import render_transcript
from ragdive.models.structured import schema_text
from ragdive.records import Document
from ragdive.simulation import DialogueSettings, Generator, Validator, run_dialogue
from ragdive.simulation.base_drafts import draft_schema, sentences
from ragdive.simulation.checks import DocumentIndex, deterministic_checks
from ragdive.simulation.validator import VerdictOutput
from ragdive.testing.schema_example import example_for_schema

from .helpers import DOCS, EchoTarget, plan

EXAMPLE_NOTES = Document(
    id="example",
    text=re.sub(
        r"\s+",
        " ",
        """The Aero fan has three speeds. Its filter should
be rinsed every two weeks. The fan switches off by itself after eight hours.""",
    ),
)


def base_model(name: str, responder: object) -> tuple[Model, ScriptedModel]:
    backend = ScriptedModel(name, responder=responder)  # type: ignore[arg-type]
    return Model(backend, spec=ModelSpec(model=name, prompt_profile="base")), backend


def grammar_answer(messages: list[Message], schema: type[BaseModel]) -> str:
    """A valid instance of the schema it was given (what a grammar-constrained model writes), with the two
    questions worded apart as a real draft would have them."""
    data = example_for_schema(schema.model_json_schema())
    if "rag_input" in data:
        data["standalone_question"], data["rag_input"] = "When was the harbour built?", "and when was that?"
    answer = json.dumps(data)
    schema.model_validate_json(answer)
    return answer


def test_the_base_generator_prompt_is_a_few_shot_transcript_whose_example_the_grammar_allows() -> None:
    generator = Generator(base_model("scripted/user", grammar_answer)[0])
    persona = plan().persona
    for turn_index in (0, 1):
        history = [] if turn_index == 0 else _history()
        messages = generator.first_messages(
            persona=persona, documents=DOCS[:1], history=history, turn_index=turn_index, probe=False
        )
        assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
        assert "Aero fan" in messages[1].content and DOCS[0].text in messages[3].content
        assert render_transcript(messages).endswith(f"Turn {turn_index + 1}.\nAssistant:")
        schema = draft_schema(sentences([EXAMPLE_NOTES]), turn_index, False)
        example = schema.model_validate_json(messages[2].content)
        # keys in the order the grammar (compiled from schema_text) makes the model write them
        assert list(json.loads(messages[2].content)) == list(json.loads(schema_text(schema))["properties"])
        draft = example.to_draft(unanswerable=False)  # type: ignore[attr-defined]
        problems = deterministic_checks(draft, turn_index=turn_index, index=DocumentIndex([EXAMPLE_NOTES]))
        assert problems == []  # the example teaches a draft that passes every deterministic check


def _history():  # noqa: ANN202 - a finished first turn
    from tests.factories import make_turn

    return [make_turn(0)]


def test_the_base_draft_schema_quotes_the_documents_own_sentences_and_fixes_turn_one() -> None:
    quotes = sentences(DOCS[:1])
    assert quotes[0] == "The old harbour of Veldmark was built in 1632 by Dutch engineers."
    first = draft_schema(quotes, 0, False).model_json_schema()
    assert first["properties"]["evidence"]["items"]["enum"] == list(quotes)
    assert first["properties"]["question_type"]["const"] == "initial"
    assert "rag_input" not in first["properties"]  # one question in turn 1: message and stand-alone form
    later = draft_schema(quotes, 2, False).model_json_schema()
    assert "initial" not in later["properties"]["question_type"]["enum"]
    assert [o.get("enum") or o.get("type") for o in later["properties"]["refers_to_turn"]["anyOf"]] == [
        [1, 2],
        "null",
    ]
    probe = draft_schema(quotes, 1, True).model_json_schema()
    assert probe["properties"]["ground_truth"]["const"] == "not in the knowledge base"


async def test_a_conversation_runs_on_the_base_prompts_and_drafts_pass_the_checks() -> None:
    user, user_backend = base_model("scripted/user", grammar_answer)
    validator, validator_backend = base_model(
        "scripted/validator", lambda m: {"failed_checks": [], "reason": "ok", "valid": True}
    )
    result = await run_dialogue(
        plan(),
        generator=Generator(user),
        validator=Validator(validator),
        target=EchoTarget(),
        settings=DialogueSettings(max_turns=2, max_attempts=2),
    )
    conversation = result.conversation
    assert conversation.status == "finished", conversation.error
    assert [len(t.attempts) for t in conversation.turns] == [1, 1]
    assert not any(t.validator_overruled for t in conversation.turns)
    first, second = conversation.turns
    assert first.rag_input == first.standalone_question and first.evidence[0] in DOCS[0].text
    assert all(call.schema is not None and call.schema.__name__.startswith("BaseDraft") for call in user_backend.calls)
    [validator_call, *_] = validator_backend.calls
    assert validator_call.schema is not VerdictOutput and issubclass(validator_call.schema, VerdictOutput)  # type: ignore[arg-type]
    assert "Quote:" in validator_call.messages[-1].content and validator_call.messages[2].role == "assistant"


async def test_a_rejected_base_draft_is_redrafted_in_the_transcript() -> None:
    user, user_backend = base_model("scripted/user", grammar_answer)
    verdicts = iter([{"failed_checks": ["not_standalone"], "reason": "unclear", "valid": False}])
    validator, _ = base_model(
        "scripted/validator", lambda m: next(verdicts, {"failed_checks": [], "reason": "ok", "valid": True})
    )
    result = await run_dialogue(
        plan(),
        generator=Generator(user),
        validator=Validator(validator),
        target=EchoTarget(),
        settings=DialogueSettings(max_turns=1, max_attempts=2),
    )
    assert len(result.conversation.turns[0].attempts) == 2
    redraft = user_backend.calls[1].messages
    assert redraft[-2].role == "assistant" and json.loads(redraft[-2].content)["question_type"] == "initial"
    assert redraft[-1].content.startswith("Not accepted: unclear")


def test_the_chat_profile_keeps_the_chat_prompts() -> None:
    generator = Generator(Model(ScriptedModel("scripted/user")))
    messages = generator.first_messages(
        persona=plan().persona, documents=DOCS[:1], history=[], turn_index=0, probe=False
    )
    assert len(messages) == 2 and "Aero fan" not in messages[0].content + messages[1].content


def test_the_base_validator_prompt_shows_an_accepted_and_a_rejected_example_the_grammar_allows() -> None:
    from ragdive.models.profiles import bounded_schema
    from tests.factories import make_draft

    validator = Validator(base_model("scripted/validator", grammar_answer)[0])
    messages = validator.messages(make_draft(0), turn_index=0, persona=plan().persona, documents=DOCS, history=[])
    examples = [m.content for m in messages if m.role == "assistant"]
    schema = bounded_schema(VerdictOutput)
    verdicts = [schema.model_validate_json(e) for e in examples]
    assert [v.valid for v in verdicts] == [True, False]  # type: ignore[attr-defined]
    for example in examples:
        assert list(json.loads(example)) == list(json.loads(schema_text(schema))["properties"])
    assert messages[-1].content.endswith("Answer: answer 0") and "Quote: quote 0" in messages[-1].content
