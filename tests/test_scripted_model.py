from __future__ import annotations

import pytest
from pydantic import BaseModel

from ragdive.errors import ConfigError, ModelOutputError
from ragdive.models import Message, ScriptedModel, create_backend, get_model
from ragdive.models.model import Model


class Answer(BaseModel):
    value: int


async def test_queued_outputs_in_order_and_calls_recorded() -> None:
    backend = ScriptedModel().enqueue("one", {"value": 2}, Answer(value=3))
    model = Model(backend, role="judge")
    msgs = [Message(role="user", content="hello there")]
    assert (await model.generate(msgs)).text == "one"
    assert (await model.generate(msgs, schema=Answer)).parsed == Answer(value=2)
    assert (await model.generate(msgs, schema=Answer)).parsed == Answer(value=3)
    assert len(backend.calls) == 3 and backend.calls[1].schema is Answer
    assert "hello there" in backend.calls[0].text
    with pytest.raises(RuntimeError, match="no scripted output left"):
        await model.generate(msgs)


async def test_responder_function_and_exceptions() -> None:
    backend = ScriptedModel(responder=lambda messages: messages[-1].content.upper())
    backend.enqueue(ValueError("not a model failure"))  # not retryable: passes through unchanged
    model = Model(backend)
    with pytest.raises(ValueError):
        await model.generate([Message(role="user", content="a")])
    assert (await model.generate([Message(role="user", content="abc")])).text == "ABC"


async def test_garbage_for_a_schema_is_a_typed_error_with_the_raw_text() -> None:
    # garbage, then garbage again after the one corrective retry
    backend = ScriptedModel().enqueue("not json at all", "still not json")
    model = Model(backend)
    with pytest.raises(ModelOutputError) as info:
        await model.generate([Message(role="user", content="x")], schema=Answer)
    assert info.value.raw == "still not json"
    assert len(backend.calls) == 2 and "not json at all" in backend.calls[1].text


def test_registry_names_and_unknown_provider() -> None:
    assert isinstance(create_backend("scripted/anything"), ScriptedModel)
    assert get_model("scripted/x", role="user").role == "user"
    with pytest.raises(ConfigError, match="unknown model provider 'nope'.*scripted"):
        create_backend("nope/model")
    with pytest.raises(ConfigError, match="provider/model"):
        create_backend("justaname")


def test_role_overrides_and_bindings() -> None:
    from ragdive.config import ModelsConfig
    from ragdive.models import apply_model_overrides, models_for_roles

    cfg = ModelsConfig(judge="scripted/j")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="no model for role 'user'"):
        models_for_roles(cfg, ["user"])
    cfg = apply_model_overrides(cfg, ["scripted/all", "judge=scripted/judge"])
    bound = models_for_roles(cfg, ["user", "validator", "judge", "target"])
    assert {r: m.name for r, m in bound.items()} == {
        "user": "scripted/all",
        "validator": "scripted/all",
        "judge": "scripted/judge",
        "target": "scripted/all",
    }
    with pytest.raises(ConfigError, match="unknown role 'jduge'"):
        apply_model_overrides(cfg, ["jduge=scripted/x"])
