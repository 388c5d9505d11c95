"""The openai backend over real HTTP against the project's fault-injecting stub server on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragdive.config.models import ModelSpec
from ragdive.errors import ConfigError, ModelError
from ragdive.models import CompletionCache, GenerateParams, Message, Model, ModelContext, get_model
from ragdive.testing import Fault, StubServer

from .conftest import Capital

MSGS = [Message(role="user", content="What is the capital of France?")]
KEY_ENV = "RAGDIVE_TEST_STUB_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-stub-key")


_built: list[Model] = []


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    """Each test's models closed in its own loop (an aiohttp pool left open is reported when collected)."""
    yield
    while _built:
        await _built.pop().aclose()


def stub_model(stub: StubServer, context: ModelContext | None = None, **spec: object) -> Model:
    fields = {"backoff_s": 0.01, "timeout_s": 2.0, "api_key_env": KEY_ENV, **spec}
    model = get_model(ModelSpec(model="openai/stub-model", base_url=stub.base_url, **fields), context=context)  # type: ignore[arg-type]
    _built.append(model)
    return model


async def test_plain_and_structured_answers_with_params_forwarded(stub: StubServer) -> None:
    model = stub_model(stub)
    completion = await model.generate(MSGS, params=GenerateParams(temperature=0.2, seed=7, max_tokens=50))
    assert completion.text.startswith("stub answer to: What is the capital")
    assert completion.finish_reason == "stop" and completion.usage.completion_tokens > 0
    structured = await model.generate(MSGS, schema=Capital)
    assert isinstance(structured.parsed, Capital)
    sent = [r.body for r in stub.requests]
    assert (sent[0]["temperature"], sent[0]["seed"], sent[0]["max_tokens"], sent[0]["model"]) == (
        0.2,
        7,
        50,
        "stub-model",
    )
    assert sent[1]["response_format"]["type"] == "json_schema"
    assert sent[1]["response_format"]["json_schema"]["schema"]["required"] == ["capital", "population_millions"]
    assert "authorization" not in stub.requests[0].headers  # the stub does not even keep it


async def test_every_fault_is_retried_and_nothing_is_lost(stub: StubServer) -> None:
    stub.plan(
        Fault.rate_limited(retry_after=0.3),
        Fault.error(500),
        Fault.hang(10),  # past timeout_s=0.5
        Fault.garbage(),
        Fault.error(503),
    )
    model = stub_model(stub, timeout_s=0.5, max_retries=5)
    completion = await model.generate(MSGS, schema=Capital)
    assert isinstance(completion.parsed, Capital)
    kinds = [r.fault.kind for r in stub.requests]
    assert kinds == ["status", "status", "hang", "garbage", "status", "ok"]
    waited_after_429 = stub.requests[1].at - stub.requests[0].at
    assert waited_after_429 >= 0.3  # Retry-After honoured
    assert stub.requests[3].at - stub.requests[2].at >= 0.45  # the hung call was abandoned at the timeout (0.5 s)
    # every request sent is a call (the server's count); tokens come only from the one answer
    (line,) = model.context.ledger.lines()
    assert line.calls == stub.request_count == 6 and line.retries == 5
    assert line.prompt_tokens > 0


async def test_concurrent_calls_through_faults_all_get_their_own_answer(stub: StubServer) -> None:
    faults = [Fault.rate_limited(0.05), Fault.error(500), Fault.garbage(), Fault.error(502), Fault.hang(10)] * 2
    stub.plan(*faults)
    model = stub_model(stub, timeout_s=0.5, max_retries=6, max_concurrency=8)
    questions = [f"question number {i}" for i in range(24)]
    answers = await asyncio.gather(*(model.generate([Message(role="user", content=q)]) for q in questions))
    assert [a.text for a in answers] == [f"stub answer to: {q}" for q in questions]
    assert stub.request_count == len(questions) + len(faults)  # each fault cost exactly one extra request
    assert model.context.ledger.lines()[0].calls == stub.request_count  # every request sent, as the server counts


async def test_invalid_json_content_gets_one_corrective_retry(stub: StubServer) -> None:
    stub.plan(Fault.bad_content("Paris, obviously."))
    completion = await stub_model(stub).generate(MSGS, schema=Capital)
    assert isinstance(completion.parsed, Capital) and stub.request_count == 2
    retry_messages = stub.requests[1].body["messages"]
    assert retry_messages[-2] == {"role": "assistant", "content": "Paris, obviously."}


async def test_401_is_not_retried_and_names_the_key_variable(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-wrong")
    with pytest.raises(ModelError) as info:
        await stub_model(stub).generate(MSGS)
    message = str(info.value)
    assert info.value.status == 401 and not info.value.retryable
    assert "openai/stub-model" in message and "401" in message and KEY_ENV in message
    assert "sk-wrong" not in message
    assert stub.request_count == 1


async def test_400_is_not_retried(stub: StubServer) -> None:
    stub.plan(Fault.error(400, "max_tokens is too large"))
    with pytest.raises(ModelError, match="HTTP 400 .*max_tokens is too large") as info:
        await stub_model(stub).generate(MSGS)
    assert info.value.status == 400 and stub.request_count == 1


async def test_persistent_429_gives_up_with_the_status(stub: StubServer) -> None:
    stub.plan(*[Fault.rate_limited(retry_after=0.01)] * 3)
    with pytest.raises(ModelError, match="HTTP 429.*gave up after 3 attempts") as info:
        await stub_model(stub, max_retries=2).generate(MSGS)
    assert info.value.status == 429 and stub.request_count == 3


async def test_unreachable_server_is_a_retryable_connection_error() -> None:
    model = get_model(ModelSpec(model="openai/x", base_url="http://127.0.0.1:9/v1", backoff_s=0.01, max_retries=1))
    with pytest.raises(ModelError, match="cannot connect to http://127.0.0.1:9/v1"):
        await model.generate(MSGS)


async def test_format_negotiation_falls_back_and_remembers(stub: StubServer) -> None:
    stub.plan(
        Fault.error(400, "response_format json_schema is not supported"),
        Fault.error(422, "unknown field response_format.schema"),
        Fault.ok('{"capital": "Paris", "population_millions": 2}'),
        Fault.ok('{"capital": "Rome", "population_millions": 3}'),
    )
    model = stub_model(stub)
    assert isinstance((await model.generate(MSGS, schema=Capital)).parsed, Capital)
    assert model.backend.structured_mode == "json_object"  # type: ignore[attr-defined]
    bodies = [r.body for r in stub.requests]
    assert bodies[0]["response_format"]["type"] == "json_schema"
    assert bodies[1]["response_format"] == {"type": "json_object", "schema": Capital.model_json_schema()}
    assert bodies[2]["response_format"] == {"type": "json_object"}
    assert "JSON schema" in bodies[2]["messages"][-1]["content"]  # JSON mode: the schema is in the prompt
    await model.generate([Message(role="user", content="again")], schema=Capital)
    assert stub.requests[3].body["response_format"] == {"type": "json_object"}  # remembered


async def test_second_identical_call_never_reaches_the_server(stub: StubServer, tmp_path: Path) -> None:
    context = ModelContext(cache=CompletionCache(tmp_path))
    model = stub_model(stub, context=context)
    first = await model.generate(MSGS, schema=Capital)
    second = await model.generate(MSGS, schema=Capital)
    assert stub.request_count == 1 and second.cached and second.parsed == first.parsed
    await model.generate(MSGS, schema=Capital, repeat_index=1)
    assert stub.request_count == 2


def test_missing_key_for_the_official_endpoint_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set the environment variable OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")


async def test_the_connection_pool_keeps_one_connection_alive_per_slot_of_the_model() -> None:
    with StubServer() as server:
        spec = ModelSpec(model="openai/stub-model", base_url=server.base_url, max_concurrency=250)
        model = get_model(spec, role="judge")
        await model.generate([Message(role="user", content="hi")])
        session = model.backend._session()  # type: ignore[attr-defined]
        assert session.connections == 250  # every connection kept alive up to it (the SDK's default: 100 of 1,000)
        await model.aclose()


async def test_a_json_reply_that_is_not_a_chat_completion_is_unreadable_and_retried(stub: StubServer) -> None:
    stub.plan(Fault.garbage('{"detail": "a proxy answered"}'), Fault.garbage('{"choices": [{"message": null}]}'))
    with pytest.raises(ModelError, match="unreadable response from .*no choices") as info:
        await stub_model(stub, max_retries=0).generate(MSGS)
    assert info.value.retryable
    completion = await stub_model(stub, max_retries=1).generate(MSGS)  # the second fault, then a real answer
    assert completion.text.startswith("stub answer to:") and stub.request_count == 3


async def test_organization_and_project_are_sent_as_the_official_client_sends_them(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-test")
    await stub_model(stub).generate(MSGS)
    headers = {k.lower(): v for k, v in stub.requests[0].headers.items()}
    assert headers["openai-organization"] == "org-test" and headers["openai-project"] == "proj-test"
    assert headers["content-type"] == "application/json" and headers["user-agent"].startswith("ragdive/")


async def test_tokens_the_provider_served_from_its_prompt_cache_are_read_and_recorded() -> None:
    """OpenAI's usage.prompt_tokens_details.cached_tokens reaches the completion's usage and the role's spend
    line; the other providers' names for it are read too."""
    from ragdive.models.backends.openai_shape import provider_cached_tokens

    def reply(body: dict[str, object]) -> dict[str, object]:
        usage = {"prompt_tokens": 40, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 32}}
        return {"text": "Paris", "extra": {"usage": usage}}

    context = ModelContext()
    price = {"input_per_1m": 1.0, "output_per_1m": 2.0, "cached_input_per_1m": 0.25}
    with StubServer(reply=reply) as server:
        model = stub_model(server, context, prices=price)  # type: ignore[arg-type]
        first = await model.generate(MSGS)
        await model.generate([Message(role="user", content="And of Italy?")])
    assert (first.usage.prompt_tokens, first.usage.provider_cached_tokens) == (40, 32)
    (line,) = context.ledger.spend()
    assert (line.calls, line.prompt_tokens, line.provider_cached_tokens) == (2, 80, 64)
    # priced at the cached rate: per call 8 x 1.0 + 32 x 0.25 for the prompt, 2 x 2.0 for the answer (per 1M)
    assert line.cost_usd == pytest.approx(2 * (8 * 1.0 + 32 * 0.25 + 2 * 2.0) / 1e6)
    assert provider_cached_tokens({"prompt_tokens": 9, "prompt_cache_hit_tokens": 7}) == 7  # DeepSeek
    assert provider_cached_tokens({"input_tokens": 9, "cache_read_input_tokens": 5}) == 5  # Anthropic
    assert provider_cached_tokens({"prompt_tokens": 9, "prompt_tokens_details": None}) == 0
    assert provider_cached_tokens(None) == 0


async def test_the_socket_read_timeout_is_dropped_only_when_the_whole_call_timeout_fires_first() -> None:
    """Every call runs under the wrapper's timeout_s as a whole; a 600 s read timeout could then never fire first
    under the default 120 s, and aiohttp would re-arm its timer at every chunk read for nothing."""
    from ragdive.models.backends.openai_compat import READ_TIMEOUT_S

    for timeout_s, expected in ((120.0, None), (READ_TIMEOUT_S, None), (900.0, READ_TIMEOUT_S)):
        model = get_model(ModelSpec(model="openai/m", base_url="http://127.0.0.1:9/v1", timeout_s=timeout_s))
        try:
            session = model.backend._session()  # type: ignore[attr-defined]
            assert session._session.timeout.sock_read == expected
            assert session._session.timeout.sock_connect == 5.0
        finally:
            await model.aclose()
