"""Prompt profiles: which model gets the base prompts, and the bounded schemas and transcript prompts they use."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from ragdive.config import ExperimentConfig, validate_config
from ragdive.config.models import ModelSpec
from ragdive.errors import ConfigError
from ragdive.models import Message, Model, ScriptedModel
from ragdive.models.profiles import bounded_schema, resolve_profile
from ragdive.models.prompting import render_transcript, transcript_messages


@pytest.mark.parametrize(
    ("spec", "profile"),
    [
        ({"model": "llamacpp/default"}, "base"),
        ({"model": "llamacpp/default", "prompt_profile": "chat"}, "chat"),
        ({"model": "llamacpp/models/other.gguf"}, "chat"),
        ({"model": "openai/gpt-4o-mini"}, "chat"),
        ({"model": "openai/my-base-model", "prompt_profile": "base"}, "base"),
        ({"model": "scripted/x"}, "chat"),
    ],
)
def test_the_base_profile_is_chosen_for_the_packaged_model_and_selectable_for_others(
    spec: dict[str, str], profile: str
) -> None:
    assert resolve_profile(ModelSpec.model_validate(spec)) == profile


def test_a_model_carries_its_profile() -> None:
    assert Model(ScriptedModel("scripted/a")).prompt_profile == "chat"
    spec = ModelSpec(model="scripted/a", prompt_profile="base")
    assert Model(ScriptedModel("scripted/a"), spec=spec).prompt_profile == "base"


def test_the_profile_is_a_config_option_and_a_typo_is_a_config_error() -> None:
    data = {"models": {"default": {"model": "openai/x", "prompt_profile": "base"}}}
    config = validate_config(data, ExperimentConfig, source="test")
    assert config.models.default is not None and config.models.default.prompt_profile == "base"
    with pytest.raises(ConfigError):
        validate_config({"models": {"default": {"model": "openai/x", "prompt_profile": "basic"}}}, ExperimentConfig)


class Inner(BaseModel):
    claim: str
    ok: bool


class Outer(BaseModel):
    reason: str = ""
    items: list[Inner] = Field(default_factory=list, max_length=7)
    tags: list[str] = Field(default_factory=list, max_length=1)


def test_bounded_schema_limits_text_and_lists_requires_every_field_and_stays_a_subclass() -> None:
    short = bounded_schema(Outer, text_chars=10, list_items=2)
    schema = short.model_json_schema()
    assert set(schema["required"]) == {"reason", "items", "tags"}
    assert schema["properties"]["items"]["maxItems"] == 2
    assert schema["properties"]["tags"]["maxItems"] == 1  # the field's own tighter limit is kept
    ok = short.model_validate_json('{"reason": "fine", "items": [{"claim": "c", "ok": true}], "tags": []}')
    assert isinstance(ok, Outer) and isinstance(ok.items[0], Inner)
    for bad in (
        '{"reason": "far too long a reason", "items": [], "tags": []}',
        '{"reason": "a\\nb", "items": [], "tags": []}',  # a newline in a field: what the grammar must not allow
        '{"items": [], "tags": []}',
        '{"reason": "", "items": [{"claim": "c", "ok": true}, {"claim": "c", "ok": true}, '
        '{"claim": "c", "ok": true}], "tags": []}',
    ):
        with pytest.raises(ValidationError):
            short.model_validate_json(bad)


def test_a_transcript_prompt_splits_into_messages_and_renders_as_one_completion() -> None:
    messages = transcript_messages("<|system|>\nTask.\n<|user|>\nexample\n<|assistant|>\n{}\n<|user|>\nreal one\n")
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert render_transcript(messages) == "Task.\n\nUser: example\nAssistant: {}\nUser: real one\nAssistant:"
    with pytest.raises(ValueError):
        transcript_messages("no marks at all")
    with pytest.raises(ValueError):
        transcript_messages("<|user|>\n\n<|assistant|>\nx")
    assert isinstance(messages[0], Message)


def test_an_exact_bound_asks_for_exactly_that_many_items() -> None:
    exact = bounded_schema(Outer, list_items=3, exact=True).model_json_schema()["properties"]["items"]
    assert (exact["minItems"], exact["maxItems"]) == (3, 3)
