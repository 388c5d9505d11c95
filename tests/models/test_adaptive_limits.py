"""Adaptive concurrency per endpoint (AIMD): a 429 halves the limit once per burst, successes raise it by one,
within [1, max_concurrency]; what happened reaches the manifest through the run recorder."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ragdive.config.models import ModelSpec
from ragdive.models import Message, ModelContext, get_model
from ragdive.models.limits import Limiter
from ragdive.records import ModelLimit
from ragdive.store import RunRecorder, RunStore
from ragdive.testing import Fault, StubServer


async def test_halved_once_per_generation_and_raised_by_streaks_within_bounds() -> None:
    limiter = Limiter(8)
    async with limiter.slot() as a, limiter.slot() as b:
        pass
    limiter.throttled(a)
    limiter.throttled(b)  # the same burst: started before the first halving
    assert (limiter.limit, limiter.backoffs) == (4, 1)
    for _ in range(4):
        async with limiter.slot():
            pass
        limiter.succeeded()
    assert limiter.limit == 5  # a streak as long as the limit: +1
    for _ in range(10):
        async with limiter.slot() as s:
            pass
        limiter.throttled(s)
    assert limiter.limit == 1 and limiter.lowest == 1  # never below 1
    for _ in range(200):
        limiter.succeeded()
    assert limiter.limit == 8  # never above max_concurrency


async def test_no_more_calls_in_flight_than_the_current_limit() -> None:
    limiter = Limiter(6)
    async with limiter.slot() as first:
        pass
    limiter.throttled(first)  # limit 3
    peak = 0

    async def call() -> None:
        nonlocal peak
        async with limiter.slot():
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(call() for _ in range(20)))
    assert peak == 3 and limiter.in_flight == 0


async def test_429s_over_http_halve_the_limit_and_the_manifest_records_it(tmp_path: Path) -> None:
    with StubServer() as server:
        server.plan(*[Fault.rate_limited(retry_after=0.01)] * 8)
        context = ModelContext()
        spec = ModelSpec(model="openai/stub-model", base_url=server.base_url, max_concurrency=8, max_retries=6)
        model = get_model(spec, role="judge", context=context)
        await asyncio.gather(*(model.generate([Message(role="user", content=f"q{i}")]) for i in range(8)))
        await model.aclose()
    [limit] = context.limits()
    assert limit.model == "openai/stub-model" and limit.max_concurrency == 8
    assert 1 <= limit.lowest < 8 and limit.backoffs >= 1

    store = RunStore.create(tmp_path)
    RunRecorder(store).record(limits=context.limits())
    RunRecorder(store).record(limits=[])  # a write with nothing new keeps what was recorded
    assert store.read_manifest().totals.limits == [limit]
    later = ModelLimit(model=limit.model, max_concurrency=8, limit=8, lowest=2, backoffs=2)
    RunRecorder(store).record(limits=[later])  # a later session's replaces it
    assert store.read_manifest().totals.limits == [later]


def test_a_waiting_simulation_call_goes_before_a_judge_call_that_waited_longer() -> None:
    """One endpoint serving every role: the judge, judging as the run goes, must not lengthen a conversation's
    chain of calls. Background calls that find a free slot still take it."""
    order: list[str] = []

    async def call(limiter: Limiter, name: str, background: bool) -> None:
        async with limiter.slot(background=background):
            order.append(name)
            await asyncio.sleep(0)

    async def go() -> None:
        limiter = Limiter(1)
        async with limiter.slot():
            waiting = [
                asyncio.ensure_future(call(limiter, "judge-1", True)),
                asyncio.ensure_future(call(limiter, "judge-2", True)),
            ]
            await asyncio.sleep(0)
            waiting.append(asyncio.ensure_future(call(limiter, "user", False)))
            await asyncio.sleep(0)
        await asyncio.gather(*waiting)
        await call(limiter, "judge-3", True)  # a free slot: no waiting

    asyncio.run(go())
    assert order == ["user", "judge-1", "judge-2", "judge-3"]


def test_a_cancelled_background_waiter_leaves_its_queue() -> None:
    async def go() -> int:
        limiter = Limiter(1)
        async with limiter.slot():
            waiter = asyncio.ensure_future(limiter.slot(background=True).__aenter__())
            await asyncio.sleep(0)
            waiter.cancel()
            await asyncio.gather(waiter, return_exceptions=True)
        async with limiter.slot(background=True):
            return limiter.in_flight

    assert asyncio.run(go()) == 1


def test_a_waiter_cancelled_and_then_skipped_by_a_release_ends_cancelled_and_the_slot_stays_usable() -> None:
    """The waiter is cancelled; before it runs again, the holder's release wakes the queue, which drops the
    cancelled waiter. The waiter must end with CancelledError (not a ValueError from removing it twice), and the
    limiter must count nobody waiting and hand its slot to the next caller."""
    limiter = Limiter(1)

    async def scenario() -> tuple[bool, int, int]:
        async def hold() -> None:
            async with limiter.slot():
                await asyncio.sleep(0)

        await limiter._acquire(False)  # the one slot taken
        waiter = asyncio.create_task(hold())
        await asyncio.sleep(0)  # it waits in the queue now
        waiter.cancel()  # its turn future is cancelled at once; the task learns of it on its next step
        limiter._release()  # the release pops the cancelled turn before the task runs again
        try:
            await waiter
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        await asyncio.wait_for(hold(), timeout=5)  # the slot is free for the next caller
        return cancelled, limiter._queued, limiter.in_flight

    assert asyncio.run(scenario()) == (True, 0, 0)
