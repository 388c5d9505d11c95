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


def hangs(message: str) -> str:
    import threading

    threading.Event().wait()  # never returns: a stuck index, a lock never released
    return "never"


async def hangs_async(message: str) -> str:
    import asyncio

    await asyncio.Event().wait()
    return "never"


@pytest.mark.parametrize("fn", ["hangs", "hangs_async"])
async def test_a_hung_function_is_a_target_failure_after_its_timeout(fn: str) -> None:
    target = build_target(PythonTargetConfig(callable=f"tests.test_python_target:{fn}", timeout_s=0.2))
    with pytest.raises(TargetError, match=rf"{fn} did not answer within 0.2 s"):
        await target.respond(DialogueState(id="c", history=[]), "hello")


def test_a_hung_blocking_function_does_not_keep_the_process_from_exiting() -> None:
    import subprocess
    import sys

    script = (
        "import asyncio\n"
        "from ragdive.config import PythonTargetConfig\n"
        "from ragdive.errors import TargetError\n"
        "from ragdive.targets import DialogueState, build_target\n"
        "t = build_target(PythonTargetConfig(callable='tests.test_python_target:hangs', timeout_s=0.2))\n"
        "try:\n"
        "    asyncio.run(t.respond(DialogueState(id='c', history=[]), 'hi'))\n"
        "except TargetError as e:\n"
        "    print('stopped:', e)\n"
    )
    # With asyncio's default executor the interpreter would join the stuck thread at exit and never end.
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0 and "stopped:" in out.stdout and "did not answer" in out.stdout
