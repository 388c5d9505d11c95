"""The order in which evaluation.window.bounded starts, steps and finishes jobs, pinned: what a budget lets through
depends on it (tests/pipeline/test_run.py's overshoot bound), so a faster window must keep it. Checked against the
version with asyncio.Queue, kept here as the reference, on one trace of every job's start, step and result and of
a task running beside them, for sources that have their jobs at hand and sources that wait, that fail, and whose
next item is a plain Future."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from ragdive.evaluation.window import bounded


async def reference(source: AsyncIterable[Callable[[], Awaitable[Any]]], limit: int) -> AsyncGenerator[Any, None]:
    """bounded with asyncio.Queue: a task steps the source for every job."""
    jobs = aiter(source)
    running: set[asyncio.Future[Any]] = set()
    upcoming: asyncio.Future[Any] | None = None
    finished: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()
    exhausted = False
    try:
        while True:
            if upcoming is None and not exhausted and len(running) < limit:
                upcoming = asyncio.ensure_future(anext(jobs))  # type: ignore[arg-type]
                upcoming.add_done_callback(finished.put_nowait)
            if not running and upcoming is None:
                return
            done = await finished.get()
            if done is upcoming:
                upcoming = None
                try:
                    job = done.result()
                except StopAsyncIteration:
                    exhausted = True
                else:
                    task = asyncio.ensure_future(job())
                    running.add(task)
                    task.add_done_callback(finished.put_nowait)
            else:
                running.discard(done)
                yield done.result()
    finally:
        left: list[asyncio.Future[Any]] = [*running, *([upcoming] if upcoming else [])]
        for pending in left:
            pending.cancel()
        if left:
            await asyncio.gather(*left, return_exceptions=True)


async def trace(window: Callable[..., AsyncGenerator[Any, None]], seed: int, limit: int, stop_after: int) -> list:
    rng = random.Random(seed)
    steps = [rng.choice([0, 0, 1, 2, 5]) for _ in range(60)]  # loop turns each job takes
    waits = [rng.random() < 0.3 for _ in range(60)]  # the source waits before this job (a simulation delivering)
    events: list[Any] = []
    ticks = 0
    arrived = asyncio.Event()

    def make(i: int) -> Callable[[], Awaitable[int]]:
        async def job() -> int:
            events.append(("start", i, ticks))
            for _ in range(steps[i]):
                await asyncio.sleep(0)
                events.append(("step", i, ticks))
            return i

        return job

    async def source() -> AsyncIterator[Callable[[], Awaitable[int]]]:
        for i in range(60):
            if waits[i]:
                events.append(("source waits", i, ticks))
                await asyncio.sleep(0)
                await arrived.wait()
            events.append(("source gives", i, ticks))
            yield make(i)

    async def beside() -> None:  # another task on the loop: every turn numbered
        nonlocal ticks
        while True:
            ticks += 1
            if ticks % 3 == 0:
                arrived.set()
            elif ticks % 3 == 1:
                arrived.clear()
            await asyncio.sleep(0)

    ticker = asyncio.ensure_future(beside())
    try:
        gen = window(source(), limit)
        async for result in gen:
            events.append(("result", result, ticks))
            if len([e for e in events if e[0] == "result"]) == stop_after:
                await gen.aclose()
                break
    finally:
        ticker.cancel()
    return [e for e in events if not e[0].startswith("source")]  # when the source steps is free: not what it gives


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("limit", [1, 3, 8])
async def test_jobs_start_step_and_finish_at_the_same_turns_as_with_a_task_per_step(seed: int, limit: int) -> None:
    assert await trace(bounded, seed, limit, stop_after=60) == await trace(reference, seed, limit, stop_after=60)


@pytest.mark.parametrize("seed", range(4))
async def test_closed_early_the_same_jobs_ran(seed: int) -> None:
    assert await trace(bounded, seed, 4, stop_after=17) == await trace(reference, seed, 4, stop_after=17)


@pytest.mark.parametrize("waits", [False, True], ids=["at-hand", "after-a-wait"])
@pytest.mark.parametrize("window", [bounded, reference], ids=["bounded", "reference"])
async def test_a_source_that_fails_ends_the_window_and_stops_the_jobs_in_flight(
    window: Callable[..., AsyncGenerator[Any, None]], waits: bool
) -> None:
    stopped = 0

    async def slow() -> int:
        nonlocal stopped
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped += 1
            raise
        return 0

    async def source() -> AsyncIterator[Callable[[], Awaitable[int]]]:
        yield slow
        yield slow
        if waits:
            await asyncio.sleep(0)
        raise ValueError("a bug in the source")

    with pytest.raises(ValueError, match="a bug in the source"):
        async for _ in window(source(), 4):
            pass
    assert stopped == 2


async def test_a_source_whose_next_is_a_future_and_not_a_coroutine_is_awaited_as_before() -> None:
    class Source:
        def __init__(self) -> None:
            self.left = 5

        def __aiter__(self) -> Source:
            return self

        def __anext__(self) -> asyncio.Future[Callable[[], Awaitable[int]]]:
            future: asyncio.Future[Callable[[], Awaitable[int]]] = asyncio.get_running_loop().create_future()
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
