"""Real models, slow: the openai backend against llama-cpp-python's OpenAI-compatible server, and the llamacpp
backend (llama.cpp in ragdive's worker process), both serving the packaged Gemma-3-270M GGUF (a weak base model:
we check plumbing and shape, never answer quality)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from pydantic import BaseModel

from ragdive.config.models import ModelSpec
from ragdive.models import GenerateParams, Message, get_model
from ragdive.models.local_files import default_gguf

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


class CityFact(BaseModel):
    city: str
    country: str


FEW_SHOT = [
    Message(role="system", content="Answer with JSON only."),
    Message(role="user", content="Which country is Berlin in?"),
    Message(role="assistant", content='{"city": "Berlin", "country": "Germany"}'),
    Message(role="user", content="Which country is Paris in?"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"  # a file: llama.cpp logs a lot on load
    log = log_path.open("w")
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf())]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not become ready in 120 s")
            time.sleep(0.2)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


async def test_openai_backend_against_a_real_local_server(llama_server: str) -> None:
    model = get_model(ModelSpec(model="openai/gemma-3-270m", base_url=llama_server, timeout_s=60))
    params = GenerateParams(temperature=0, seed=1, max_tokens=32)
    try:
        plain = await model.generate([Message(role="user", content="Say hello.")], params=params)
        assert plain.usage.prompt_tokens > 0 and plain.finish_reason in ("stop", "length")
        structured = await model.generate(FEW_SHOT, schema=CityFact, params=params)
        assert isinstance(structured.parsed, CityFact)
        # llama-cpp-python's server has no `json_schema` response format: the backend fell back to its grammar
        assert model.backend.structured_mode == "json_object_schema"  # type: ignore[attr-defined]
        assert structured.usage.completion_tokens > 0 and structured.latency_s > 0
    finally:
        await model.aclose()


async def test_embedded_default_model_answers_a_structured_request() -> None:
    model = get_model("llamacpp/default", role="judge")
    completion = await model.generate(FEW_SHOT, schema=CityFact, params=GenerateParams(temperature=0, seed=1))
    assert isinstance(completion.parsed, CityFact)
    assert completion.usage.prompt_tokens > 0 and completion.usage.cost_usd == 0.0
    assert completion.model == "llamacpp/default"
    plain = await model.generate(
        [Message(role="user", content="What is 2+2?")], params=GenerateParams(temperature=0, max_tokens=24)
    )
    assert plain.text and "User:" not in plain.text  # the transcript stop keeps it from writing our next turn


async def test_the_real_worker_decodes_in_its_own_process_and_passes_the_self_check() -> None:
    import os

    from ragdive.models.selfcheck import check_local_models

    model = get_model("llamacpp/default", role="user")
    # The pool shares one worker per model across the session, and an earlier test may already have checked it,
    # so call the backend's own check; the pipeline's helper must then skip the already-checked worker.
    check = await model.backend.self_check()  # type: ignore[attr-defined]
    await check_local_models([model])
    assert await check_local_models([model]) == []  # once per worker process, not once per call
    assert check.text and check.pid is not None and check.pid != os.getpid()
    completion = await model.generate(FEW_SHOT, schema=CityFact, params=GenerateParams(temperature=0, seed=1))
    assert isinstance(completion.parsed, CityFact) and completion.usage.completion_tokens > 0
    assert model.backend.worker().pid == check.pid  # type: ignore[attr-defined]  # one worker, reused
