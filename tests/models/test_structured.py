from __future__ import annotations

import pytest

from ragdive.errors import ModelOutputError
from ragdive.models import Message, Model, ScriptedModel, parse_structured, repair_json

from .conftest import Capital

MSGS = [Message(role="user", content="capital of France?")]
GOOD = '{"capital": "Paris", "population_millions": 2}'


@pytest.mark.parametrize(
    "damaged",
    [
        f"```json\n{GOOD}\n```",
        f"Sure! Here it is:\n{GOOD}\nHope that helps.",
        '{"capital": "Paris", "population_millions": 2,}',
        '```\n{"capital": "Paris", "population_millions": 2, }\n```',
    ],
)
def test_lenient_repair_of_common_damage(damaged: str) -> None:
    assert parse_structured(damaged, Capital) == Capital(capital="Paris", population_millions=2)


def test_repair_keeps_commas_and_braces_inside_strings() -> None:
    text = 'note {"capital": "Paris, }", "population_millions": 2,} end'
    assert repair_json(text) == '{"capital": "Paris, }", "population_millions": 2}'
    assert repair_json("no json here") is None


def test_unrepairable_text_is_a_typed_error_carrying_the_raw_text() -> None:
    with pytest.raises(ModelOutputError, match="population_millions") as info:
        parse_structured('{"capital": "Paris"}', Capital, model="scripted/x")
    assert info.value.raw == '{"capital": "Paris"}' and info.value.model == "scripted/x"


async def test_one_corrective_retry_tells_the_model_what_was_wrong() -> None:
    backend = ScriptedModel().enqueue('{"capital": "Paris"}', GOOD)
    completion = await Model(backend).generate(MSGS, schema=Capital)
    assert completion.parsed == Capital(capital="Paris", population_millions=2)
    assert len(backend.calls) == 2
    retry = backend.calls[1].messages
    assert retry[-2].role == "assistant" and retry[-2].content == '{"capital": "Paris"}'
    assert "population_millions" in retry[-1].content and "Field required" in retry[-1].content
    # both calls' tokens are in the answer's usage
    assert completion.usage.completion_tokens == len('{"capital": "Paris"}'.split()) + len(GOOD.split())


async def test_no_retry_when_repair_suffices() -> None:
    backend = ScriptedModel().enqueue(f"```json\n{GOOD}\n```")
    completion = await Model(backend).generate(MSGS, schema=Capital)
    assert completion.parsed.capital == "Paris" and len(backend.calls) == 1


async def test_still_wrong_after_the_retry_raises_with_the_last_raw_text() -> None:
    backend = ScriptedModel().enqueue("I think Paris.", "Definitely Paris!")
    with pytest.raises(ModelOutputError, match="after one corrective retry") as info:
        await Model(backend).generate(MSGS, schema=Capital)
    assert info.value.raw == "Definitely Paris!"
    assert len(backend.calls) == 2
    # both unusable answers were paid for, and the error says so (the scripted double counts words as tokens)
    assert info.value.usage.completion_tokens == len("I think Paris.".split()) + len("Definitely Paris!".split())


async def test_scripted_double_explains_the_corrective_retry_when_its_queue_runs_out() -> None:
    with pytest.raises(RuntimeError, match="one corrective retry, so enqueue a second output"):
        await Model(ScriptedModel().enqueue("garbage")).generate(MSGS, schema=Capital)
