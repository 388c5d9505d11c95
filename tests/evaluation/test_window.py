"""evaluation.window.bounded, the judging window: what it guarantees, not the loop turns it takes. At most
``limit`` jobs in flight; the source read only as room frees (a source still being filled is read while jobs
run; thousands of items do not make thousands of tasks); results handed over as they finish; an exception in a
job or the source ends the window and stops the rest; closing it cancels what is in flight and starts nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from ragdive.evaluation.window import bounded

Job = Callable[[], Awaitable[int]]


async def test_at_most_limit_jobs_run_at_once_and_the_source_is_read_only_as_they_finish() -> None:
    running = peak = taken = returned = 0

    def make(i: int) -> Job:
        async def job() -> int:
            nonlocal running, peak, returned
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.001 * (i % 4))  # jobs of different lengths: they finish out of order
            running -= 1
            returned += 1
            return i

        return job

    async def source() -> AsyncIterator[Job]:
        nonlocal taken
        for i in range(300):
            taken += 1
            assert taken - returned <= 7, (taken, returned)  # one more than the limit: not taken before room frees
            yield make(i)

    results = [r async for r in bounded(source(), 7)]
    assert sorted(results) == list(range(300)) and peak == 7


async def test_thousands_of_items_make_about_limit_tasks_not_one_each() -> None:
    loop = asyncio.get_running_loop()
    made = 0
    factory = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal made
        made += 1
        return asyncio.Task(coro, loop=loop, **kwargs) if factory is None else factory(loop, coro, **kwargs)

    async def job() -> int:
        await asyncio.sleep(0)
        return 1

    async def source() -> AsyncIterator[Job]:
        for _ in range(3000):
            yield job

    loop.set_task_factory(counting)
    try:
        assert sum([r async for r in bounded(source(), 16)]) == 3000
    finally:
        loop.set_task_factory(factory)
    assert made <= 16 + 1


async def test_a_source_still_being_filled_is_read_while_jobs_run() -> None:
    """The first job finishes only once the source has given a second one (a simulation delivers conversations
    while the first ones are judged): a window that read the source only between jobs would hang here."""
    second_given = asyncio.Event()
    arrived = asyncio.Event()

    async def first() -> int:
        arrived.set()  # the simulation writes another conversation meanwhile
        await second_given.wait()
        return 1

    async def second() -> int:
        return 2

    async def source() -> AsyncIterator[Job]:
        yield first
        await arrived.wait()
        second_given.set()
        yield second

    async def run() -> list[int]:
        return [r async for r in bounded(source(), 4)]

    assert sorted(await asyncio.wait_for(run(), timeout=30)) == [1, 2]  # not a hang


async def test_each_result_reaches_the_consumer_as_its_job_finishes() -> None:
    """The slow job ends only once the consumer has seen the quick one's result: not held back for the rest."""
    seen_quick = asyncio.Event()

    async def slow() -> int:
        await seen_quick.wait()
        return 0

    async def quick() -> int:
        return 1

    async def source() -> AsyncIterator[Job]:
        yield slow
        yield quick

    results = []

    async def run() -> None:
        async for result in bounded(source(), 2):
            results.append(result)
            if result == 1:
                seen_quick.set()

    await asyncio.wait_for(run(), timeout=30)  # not a hang
    assert results == [1, 0]


async def test_a_failing_job_ends_the_window_stops_the_rest_and_starts_nothing_after_it() -> None:
    """boom fails and tick finishes in the same loop turn, before the window's consumer has heard of it: tick's
    room must not take the next job."""
    started: list[str] = []
    stopped = 0
    go = asyncio.Event()

    async def boom() -> int:
        started.append("boom")
        await go.wait()
        raise ValueError("judge bug")

    async def tick() -> int:
        started.append("tick")
        await go.wait()  # woken right after boom
        return 1

    async def slow() -> int:
        nonlocal stopped
        started.append("slow")
        go.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped += 1
            raise
        return 0

    async def later() -> int:
        started.append("later")
        return 2

    async def source() -> AsyncIterator[Job]:
        yield boom
        yield tick
        yield slow
        for _ in range(50):
            yield later  # at hand the moment tick's room frees

    with pytest.raises(ValueError, match="judge bug"):
        async for _ in bounded(source(), 3):
            pass
    assert started == ["boom", "tick", "slow"] and stopped == 1


@pytest.mark.parametrize("waits", [False, True], ids=["at-hand", "after-a-wait"])
async def test_a_source_that_fails_ends_the_window_and_stops_the_jobs_in_flight(waits: bool) -> None:
    stopped = 0

    async def slow() -> int:
        nonlocal stopped
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped += 1
            raise
        return 0

    async def source() -> AsyncIterator[Job]:
        yield slow
        yield slow
        if waits:
            await asyncio.sleep(0)
        raise ValueError("a bug in the source")

    with pytest.raises(ValueError, match="a bug in the source"):
        async for _ in bounded(source(), 4):
            pass
    assert stopped == 2


async def test_closing_the_window_cancels_the_jobs_in_flight_and_starts_no_other() -> None:
    started = finished = stopped = 0

    async def job() -> int:
        nonlocal started, finished, stopped
        started += 1
        try:
            await asyncio.sleep(0.001 * (started % 3))
        except asyncio.CancelledError:
            stopped += 1
            raise
        finished += 1
        return 1

    async def source() -> AsyncIterator[Job]:
        for _ in range(1000):
            yield job

    window = bounded(source(), 5)
    async for _ in window:
        if finished >= 12:
            break
    await window.aclose()
    in_flight = started - finished
    assert in_flight == stopped > 0
    for _ in range(20):
        await asyncio.sleep(0)  # a worker left running would start another job here
    assert started == finished + stopped


async def test_a_source_whose_next_is_a_future_and_not_a_coroutine_is_awaited() -> None:
    class Source:
        def __init__(self) -> None:
            self.left = 5

        def __aiter__(self) -> Source:
            return self

        def __anext__(self) -> asyncio.Future[Job]:
            future: asyncio.Future[Job] = asyncio.get_running_loop().create_future()
            if self.left == 0:
                future.set_exception(StopAsyncIteration())
            else:
                self.left -= 1
                n = self.left

                async def job() -> int:
                    return n

                asyncio.get_running_loop().call_soon(future.set_result, job)
            return future

    assert sorted([r async for r in bounded(Source(), 2)]) == [0, 1, 2, 3, 4]
