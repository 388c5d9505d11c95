"""The llamacpp backend's worker process, with a test double of the worker (ragdive.testing.llama_worker_double)
that speaks the real protocol but crashes, hangs or fails to load on request: what ragdive does when the native
library misbehaves, without llama.cpp. A real decode through the real worker is in test_real_local_models.py."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragdive.config.models import ModelSpec
from ragdive.errors import ConfigError, ModelCrashed, ModelError
from ragdive.models import Message, get_model
from ragdive.models.selfcheck import check_local_models

DOUBLE = "ragdive.testing.llama_worker_double"
HELLO = [Message(role="user", content="hello")]


class City(BaseModel):
    city: str
    country: str


def double(tmp_path: Path, *args: str, timeout_s: float = 30.0, max_retries: int = 0):  # type: ignore[no-untyped-def]
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"not read by the double")
    # a distinct file per test: workers are shared per (module, file, args) within the process
    options = {"worker_module": DOUBLE, "worker_args": list(args)}
    spec = ModelSpec(model=f"llamacpp/{gguf}", timeout_s=timeout_s, max_retries=max_retries, options=options)
    return get_model(spec, role="judge")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_the_worker_is_another_process_and_answers_plain_and_structured(tmp_path: Path) -> None:
    model = double(tmp_path)
    plain = await model.generate(HELLO)
    assert plain.text == "Paris." and plain.usage.prompt_tokens == 3
    structured = await model.generate(HELLO, schema=City)
    assert isinstance(structured.parsed, City)
    worker = model.backend.worker()  # type: ignore[attr-defined]
    assert worker.pid is not None and worker.pid != os.getpid() and worker.starts == 1


async def test_a_native_crash_is_a_model_crashed_naming_cause_and_fix(tmp_path: Path) -> None:
    model = double(tmp_path, "--abort-after", "1", max_retries=3)
    await model.generate(HELLO)
    with pytest.raises(ModelCrashed) as caught:
        await model.generate(HELLO)
    message = str(caught.value)
    assert "SIGABRT" in message and "scripts/build_llama.py" in message and "another CPU" in message
    assert caught.value.worker_exit is not None and caught.value.worker_exit < 0
    assert "File " not in message  # faulthandler's stack (this machine's paths) is left out
    # not retried: a crash is not a transient failure, so exactly one more worker was never started
    assert model.backend.worker().starts == 1  # type: ignore[attr-defined]


async def test_a_timeout_kills_the_generation_and_the_next_call_gets_a_fresh_worker(tmp_path: Path) -> None:
    model = double(tmp_path, "--hang", timeout_s=1.0)
    worker = model.backend.worker()  # type: ignore[attr-defined]
    await asyncio.to_thread(worker.start)  # loaded first: the timeout is the generation's alone
    began = time.monotonic()
    with pytest.raises(ModelError, match="timeout_s=1"):
        await model.generate(HELLO)
    elapsed = time.monotonic() - began
    # the bound (timeout + 2 s): in-process llama.cpp would have kept generating for an hour
    assert elapsed < 1.0 + 2.0, elapsed
    assert worker.pid is None  # killed, not left running in the background
    with pytest.raises(ModelError, match="timeout_s=1"):
        await model.generate(HELLO)
    assert worker.starts == 2


async def test_a_model_file_llama_cannot_load_is_a_config_error(tmp_path: Path) -> None:
    model = double(tmp_path, "--fail-load")
    with pytest.raises(ConfigError, match="cannot load the model: ValueError: not a GGUF file"):
        await model.generate(HELLO)


async def test_the_self_check_runs_once_per_worker_and_surfaces_a_crash(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    healthy = double(tmp_path / "a")
    checks = await check_local_models([healthy, healthy])
    assert len(checks) == 1 and checks[0].text == "Paris."
    assert await check_local_models([healthy]) == []  # the same live worker was checked already
    (tmp_path / "b").mkdir()
    broken = double(tmp_path / "b", "--abort-after", "0")
    with pytest.raises(ModelCrashed, match="SIGABRT"):
        await check_local_models([broken])
    scripted = get_model("scripted/x")
    assert await check_local_models([scripted]) == []  # remote and scripted backends have no self-check


def test_the_worker_keeps_a_bounded_least_recently_used_grammar_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from ragdive.models.backends import llamacpp_worker

    compiled: list[str] = []

    class FakeLlama:
        def __init__(self, **_: object) -> None:
            pass

        def create_completion(self, prompt: str, grammar: object = None, **_: object) -> dict:
            return {"choices": [{"text": "{}", "finish_reason": "stop"}], "usage": {}}

    class FakeGrammar:
        @staticmethod
        def from_json_schema(schema: str, verbose: bool = False) -> str:
            compiled.append(schema)
            return schema

    fake = types.SimpleNamespace(Llama=FakeLlama, LlamaGrammar=FakeGrammar)
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    monkeypatch.setattr(llamacpp_worker, "GRAMMAR_CACHE_SIZE", 2)
    handle = llamacpp_worker.llama_handler("m.gguf", 512, 1)
    for schema in ["a", "b", "a", "c", "a", "b"]:
        handle({"prompt": "x", "schema": schema})
    # "a" stays (used again before "c" came in), "b" was evicted by "c" and compiled again at the end
    assert compiled == ["a", "b", "c", "b"]


def test_the_embedded_model_decodes_on_every_core_by_default(tmp_path: Path) -> None:
    model = double(tmp_path)
    assert model.backend.n_threads == (os.cpu_count() or 1)  # type: ignore[attr-defined]
    argv = model.backend.worker().argv  # type: ignore[attr-defined]  # not started: workers start at their first call
    assert argv[argv.index("--n-threads") + 1] == str(os.cpu_count() or 1)
