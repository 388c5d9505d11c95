from __future__ import annotations

import asyncio
import time

import pytest

from ragdive.config.models import ModelSpec
from ragdive.errors import ModelError
from ragdive.models import Message, Model, ScriptedModel
from ragdive.models.limits import Limiter
from ragdive.models.retry import RetryPolicy, parse_retry_after

MSGS = [Message(role="user", content="hello")]


def fast_spec(**kw: object) -> ModelSpec:
    return ModelSpec(model="scripted/x", backoff_s=0.01, **kw)  # type: ignore[arg-type]


def transient(status: int, retry_after: float | None = None) -> ModelError:
    return ModelError(f"HTTP {status}", status=status, retryable=True, retry_after=retry_after)


async def test_transient_failures_are_retried_until_an_answer() -> None:
    backend = ScriptedModel().enqueue(transient(500), transient(503), ConnectionResetError("reset"), "fine")
    completion = await Model(backend, spec=fast_spec()).generate(MSGS)
    assert completion.text == "fine" and len(backend.calls) == 4


async def test_retry_after_is_honoured() -> None:
    backend = ScriptedModel().enqueue(transient(429, retry_after=0.3), "ok")
    start = time.perf_counter()
    await Model(backend, spec=fast_spec()).generate(MSGS)
    assert time.perf_counter() - start >= 0.3


async def test_client_errors_are_not_retried() -> None:
    backend = ScriptedModel().enqueue(ModelError("HTTP 400 bad request", status=400, retryable=False), "never")
    with pytest.raises(ModelError, match="400"):
        await Model(backend, spec=fast_spec()).generate(MSGS)
    assert len(backend.calls) == 1


async def test_giving_up_after_max_retries_is_a_model_error() -> None:
    backend = ScriptedModel().enqueue(*[transient(502)] * 3, "too late")
    with pytest.raises(ModelError, match=r"gave up after 3 attempts") as info:
        await Model(backend, spec=fast_spec(max_retries=2)).generate(MSGS)
    assert info.value.status == 502 and len(backend.calls) == 3


async def test_a_call_past_its_timeout_is_abandoned_and_retried() -> None:
    calls = 0

    async def slow_then_fast(messages: list[Message]) -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(5)
        return "answered"

    model = Model(ScriptedModel(responder=slow_then_fast), spec=fast_spec(timeout_s=0.2))
    start = time.perf_counter()
    assert (await model.generate(MSGS)).text == "answered"
    assert calls == 2 and time.perf_counter() - start < 2


async def test_timeouts_every_time_end_in_a_clear_error() -> None:
    async def hang(messages: list[Message]) -> str:
        await asyncio.sleep(5)
        return "never"

    model = Model(ScriptedModel(responder=hang), spec=fast_spec(timeout_s=0.05, max_retries=1))
    with pytest.raises(ModelError, match=r"no answer within timeout_s=0.05 \(gave up after 2 attempts\)"):
        await model.generate(MSGS)


def test_backoff_grows_with_jitter_and_retry_after_wins() -> None:
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=8.0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (5, 8.0)]:
        delays = {policy.delay(attempt) for _ in range(20)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays) and len(delays) > 1
    assert 2.0 <= policy.delay(0, retry_after=2.0) <= 2.2
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert parse_retry_after({}) is None


async def test_concurrency_limit_caps_calls_in_flight() -> None:
    in_flight = peak = 0

    async def responder(messages: list[Message]) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return "ok"

    model = Model(ScriptedModel(responder=responder), spec=fast_spec(max_concurrency=3))
    await asyncio.gather(*(model.generate(MSGS) for _ in range(12)))
    assert peak == 3


async def test_requests_per_minute_spaces_the_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake clock: the pacing decision is checked exactly, not timed on a noisy machine.
    from types import SimpleNamespace

    from ragdive.models import limits

    clock = {"now": 100.0}
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock["now"] += seconds

    monkeypatch.setattr(limits, "time", SimpleNamespace(monotonic=lambda: clock["now"]))
    monkeypatch.setattr(limits.asyncio, "sleep", fake_sleep)
    limiter = Limiter(4, requests_per_minute=600)  # one start per 0.1 s
    starts: list[float] = []

    async def call() -> None:
        async with limiter.slot():
            starts.append(clock["now"])

    await asyncio.gather(*(call() for _ in range(4)))
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert gaps == pytest.approx([0.1, 0.1, 0.1]) and len(slept) == 3


def test_a_limiter_survives_several_event_loops() -> None:
    limiter = Limiter(1)

    async def use() -> None:
        async def hold() -> None:
            async with limiter.slot():
                await asyncio.sleep(0.001)

        await asyncio.gather(hold(), hold())  # contention: the semaphore must belong to this loop

    asyncio.run(use())
    asyncio.run(use())


async def test_faults_and_retries_are_counted_by_kind_and_reach_the_manifest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ragdive.models import ModelContext
    from ragdive.store import RunRecorder, RunStore

    context = ModelContext()
    backend = ScriptedModel().enqueue(transient(503), transient(503), ConnectionResetError("reset"), "fine")
    await Model(backend, spec=fast_spec(), role="judge", context=context).generate(MSGS)
    (line,) = context.ledger.spend()
    # calls are requests sent: two 503s and the answer (the reset connection sent nothing)
    assert line.calls == 3 and line.retries == 3 and line.faults == {"http_503": 2, "connection": 1}

    failing = ScriptedModel("scripted/down").enqueue(*(transient(500) for _ in range(3)))
    with pytest.raises(ModelError, match="gave up after 3 attempts"):
        await Model(failing, spec=fast_spec(max_retries=2), role="user", context=context).generate(MSGS)

    store = RunStore.create(tmp_path)
    RunRecorder(store).record(spend=context.ledger.spend())
    spend = {s.role: s for s in store.read_manifest().totals.spend}
    assert spend["user"].calls == 3 and spend["user"].faults == {"http_500": 3} and spend["user"].retries == 2
    assert spend["user"].prompt_tokens == 0  # sent and failed: counted, never paid for
    assert spend["judge"].faults == {"http_503": 2, "connection": 1}
