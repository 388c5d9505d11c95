from __future__ import annotations

import pytest

from ragdive.config import PythonTargetConfig
from ragdive.errors import ConfigError, TargetError
from ragdive.models import Message
from ragdive.targets import DialogueState, build_target


def echo(message: str, history: list[dict[str, str]]) -> dict[str, object]:
    return {"answer": f"{len(history)}:{message}", "contexts": ["plain text", {"text": "t", "id": "c1"}]}


async def async_echo(message: str, **kwargs: object) -> str:
    return f"async {message} {kwargs['conversation_id']}"


def factory(prefix: str):  # type: ignore[no-untyped-def]
    return lambda message: prefix + message


def broken(message: str) -> int:
    return 42


def raises(message: str) -> str:
    raise ValueError("index missing")


async def test_sync_async_and_factory_callables() -> None:
    state = DialogueState(
        id="c1", history=[Message(role="user", content="hi"), Message(role="assistant", content="yo")]
    )
    t = build_target(PythonTargetConfig(callable="tests.test_python_target:echo"))
    reply = await t.respond(state, "q")
    assert reply.answer == "2:q" and [c.text for c in reply.contexts] == ["plain text", "t"]
    assert reply.contexts[1].id == "c1" and reply.latency_s >= 0

    t = build_target(PythonTargetConfig(callable="tests.test_python_target:async_echo"))
    assert (await t.respond(state, "q")).answer == "async q c1"

    t = build_target(PythonTargetConfig(callable="tests.test_python_target:factory", options={"prefix": ">"}))
    assert (await t.respond(state, "q")).answer == ">q"


async def test_failures_are_target_errors() -> None:
    state = DialogueState(id="c")
    with pytest.raises(TargetError, match="expected a string"):
        await build_target(PythonTargetConfig(callable="tests.test_python_target:broken")).respond(state, "q")
    with pytest.raises(TargetError, match="ValueError: index missing"):
        await build_target(PythonTargetConfig(callable="tests.test_python_target:raises")).respond(state, "q")


def test_bad_specs_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="module:callable"):
        build_target(PythonTargetConfig(callable="nocolon"))
    with pytest.raises(ConfigError, match="cannot import"):
        build_target(PythonTargetConfig(callable="no_such_module_xyz:f"))
    with pytest.raises(ConfigError, match="no attribute"):
        build_target(PythonTargetConfig(callable="tests.test_python_target:missing"))
