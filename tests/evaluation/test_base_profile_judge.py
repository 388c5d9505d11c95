"""The judge's base prompt profile: every metric has a few-shot transcript prompt whose example answer is valid
for the bounded schema the model is asked for, and scoring runs on it with a scripted judge."""

from __future__ import annotations

import json

import pytest

from ragdive.config.models import ModelSpec
from ragdive.evaluation import Evaluator, Judge
from ragdive.models import Model, ScriptedModel
from ragdive.models.profiles import bounded_schema
from ragdive.models.prompting import render_transcript
from ragdive.models.structured import schema_text
from ragdive.prompt_files import load_prompt
from ragdive.testing.schema_example import example_for_schema
from tests.factories import make_conversation

METRICS = ["faithfulness", "context_precision", "context_recall", "correctness", "forgetfulness", "context_retention"]


def base_judge(responder: object) -> tuple[Judge, ScriptedModel]:
    backend = ScriptedModel("scripted/judge", responder=responder)  # type: ignore[arg-type]
    model = Model(backend, role="judge", spec=ModelSpec(model="scripted/judge", prompt_profile="base"))
    return Judge(model, concurrency=1), backend


def schema_answer(messages, schema):  # noqa: ANN001, ANN201 - a valid instance of what was asked for
    data = example_for_schema(schema.model_json_schema())
    for key in ("verdicts", "claims", "statements"):
        if key in data and not data[key]:
            item = schema.model_fields[key].annotation.__args__[0]  # one item, so the metric has something
            data[key] = [example_for_schema(item.model_json_schema())]
    if "verdicts" in data:
        data["verdicts"] = [{**data["verdicts"][0], "rank": 1}]
    return json.dumps(data)


@pytest.mark.parametrize("metric", METRICS)
def test_every_metric_has_a_base_prompt_with_an_example_answer(metric: str) -> None:
    assert load_prompt("ragdive.evaluation", f"base/{metric}") is not None  # the file exists and parses as a template


async def test_scoring_runs_on_the_base_prompts_with_bounded_schemas_and_valid_examples() -> None:
    judge, backend = base_judge(schema_answer)
    conversation = make_conversation(turns=2)
    for turn in conversation.turns:
        turn.contexts = turn.contexts[:1]  # one context: the scripted answer gives one verdict
    scores = await Evaluator(judge, METRICS).score_conversations([conversation])
    assert len(scores) == 4 * 2 + 2
    assert all(s.scored for s in scores if s.metric != "faithfulness"), [s.unscored_reason for s in scores]
    assert {call.schema.__name__[:5] for call in backend.calls} == {"Short"}  # type: ignore[union-attr]
    for call in backend.calls:
        system, example_q, example_a, asked = call.messages
        assert (system.role, example_q.role, example_a.role, asked.role) == ("system", "user", "assistant", "user")
        original = call.schema.__mro__[1]  # type: ignore[union-attr]
        bounded_schema(original).model_validate_json(example_a.content)  # the example obeys the default bounds
        # and writes its keys in the order the grammar makes the model write them (compiled from schema_text)
        grammar_order = list(json.loads(schema_text(call.schema))["properties"])  # type: ignore[arg-type]
        assert list(json.loads(example_a.content)) == grammar_order
        assert render_transcript(call.messages).endswith("\nAssistant:")
    correctness = next(
        c
        for c in backend.calls
        if "Reference answer" in c.messages[-1].content and "Passages" not in c.messages[-1].content
    )
    assert "Assistant's answer: reply 0" in correctness.messages[-1].content


def test_a_chat_judge_keeps_the_chat_prompts() -> None:
    judge = Judge(Model(ScriptedModel("scripted/judge")))
    messages = judge.messages("correctness", question="q", ground_truth="g", answer="a", unanswerable=False)
    assert len(messages) == 2 and "GROUND TRUTH" in messages[1].content
