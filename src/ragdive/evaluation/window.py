"""Run jobs drawn from an async source with at most ``limit`` in flight, yielding results as they finish.

Jobs are taken from the source only as room frees up: a run of thousands of judge items does not create thousands
of tasks and render every prompt before the first request leaves (issue 13 measured 2.6 s of such dead time at
4,400 items), and a source that is still being filled (conversations arriving from a simulation in progress) is
read while earlier jobs are running. An exception in a job (or in the source) ends the window: no job starts
after it, and closing the generator (which the exception does, or the consumer) cancels the jobs in flight.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
Job = Callable[[], Awaitable[T]]


async def bounded(source: AsyncIterable[Job[T]], limit: int) -> AsyncGenerator[T, None]:
    """Up to ``limit`` workers, each taking the source's next job and awaiting it in place, as a plain worker
    pool over a list does: a job costs no task of its own, no separate step to fetch the next one, and no
    hand-over per completion (issue 27 counted ~13 loop callbacks a request in a 200 x 5 run against bare
    aiohttp's ~5, most of them a task per job, a task per step of the source and a wake-up per completion).

    One worker steps the source at a time (an async generator cannot be stepped twice at once). A worker that
    takes a job while no other waits for the source starts one more, up to ``limit``: workers are made as the
    jobs in flight grow, not ``limit`` of them for a source of three. Results are collected in a list and this
    generator is woken once for all of those that finished since it last ran. A job's room is freed when it
    finishes, not when its result is consumed: the consumer must not wait long between results (the
    evaluator's counts and progress do not wait at all)."""
    jobs = aiter(source)
    limit = max(1, limit)
    finished: deque[T] = deque()
    workers: set[asyncio.Task[None]] = set()
    turn = asyncio.Lock()  # held by the worker stepping the source
    loop = asyncio.get_running_loop()
    idle = 0  # workers not in a job: waiting for the source, stepping it, or not started yet
    exhausted = closing = False
    failure: BaseException | None = None
    woken: asyncio.Future[None] | None = None  # this generator's wait, while it waits

    def wake() -> None:
        nonlocal woken
        waiting, woken = woken, None
        if waiting is not None and not waiting.done():  # done: cancelled with the consumer
            waiting.set_result(None)

    def spawn() -> None:
        nonlocal idle
        idle += 1
        workers.add(loop.create_task(worker()))

    async def worker() -> None:
        nonlocal idle, exhausted, failure
        try:
            while failure is None and not exhausted:
                async with turn:
                    if failure is not None or exhausted:
                        return
                    try:
                        job = await anext(jobs)
                    except StopAsyncIteration:
                        exhausted = True
                        return
                idle -= 1
                if not idle and len(workers) < limit:
                    spawn()  # someone steps the source on while this job runs
                try:
                    result = await job()
                finally:
                    idle += 1
                    del job  # an idle worker holds no job (nor the conversation it judged)
                finished.append(result)
                wake()
        except BaseException as exc:
            if failure is None and not closing:
                failure = exc
            raise
        finally:
            idle -= 1
            workers.discard(asyncio.current_task())  # type: ignore[arg-type]
            wake()

    spawn()
    try:
        while True:
            while finished:
                yield finished.popleft()
            if failure is not None:
                raise failure  # a job's or the source's exception ends the run (finally: the rest stop)
            if not workers:
                return
            woken = loop.create_future()
            await woken
    finally:
        closing, woken = True, None
        left = list(workers)
        for each in left:
            each.cancel()
        await asyncio.gather(*left, return_exceptions=True)
