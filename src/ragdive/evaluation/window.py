"""Run jobs drawn from an async source with at most ``limit`` in flight, yielding results as they finish.

Jobs are created only as room frees up: a run of thousands of judge items does not create thousands of tasks and
render every prompt before the first request leaves (issue 13 measured 2.6 s of such dead time at 4,400 items),
and a source that is still being filled (conversations arriving from a simulation in progress) is read while
earlier jobs are running. Closing the generator (or an exception in a job) cancels the jobs in flight.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable, Generator
from typing import Any, TypeVar

T = TypeVar("T")
Job = Callable[[], Awaitable[T]]


async def bounded(source: AsyncIterable[Job[T]], limit: int) -> AsyncGenerator[T, None]:
    """Each future reports itself on a queue when it is done, so a completion costs O(1): asyncio.wait over the
    whole running set at every completion walked every job in flight each time (issue 27 profiled 17,608 waits
    over 855k futures, ~12 % of a 200 x 5 run's loop).

    The source's next job is taken in place when the source has it at hand (it yields without waiting), and is
    started when a task stepping the source would have delivered it (two turns of the event loop later: the order
    in which jobs start, and so what a budget lets through, is unchanged): a task made per job only to step the
    source, and asyncio.Queue's bookkeeping (_Mailbox), were ~2 of the ~12 us of CPU the window took a job. A step
    that waits (a simulation still to deliver) is carried on by a task, as before."""
    jobs = aiter(source)
    running: set[asyncio.Future[T]] = set()
    upcoming: asyncio.Future[Job[T]] | None = None  # the source's next job, awaited beside the running ones
    taken: list[BaseException] = []  # the source's next step, taken in place (its job, end or error): due at _TAKEN
    finished = _Mailbox()
    exhausted = False
    loop = asyncio.get_running_loop()
    try:
        while True:
            if upcoming is None and not taken and not exhausted and len(running) < limit:
                step = anext(jobs)  # type: ignore[arg-type]
                if not hasattr(step, "send"):  # not a coroutine (an iterator's own awaitable): a task awaits it
                    upcoming = asyncio.ensure_future(step)
                    upcoming.add_done_callback(finished.put_nowait)
                    continue
                try:
                    waiting_on = step.send(None)
                except Exception as got:  # its job (StopIteration), its end or its error
                    taken.append(got)
                    # due when a task stepping the source would have reported it: the task's step runs one turn
                    # later and its result is handed over the turn after
                    loop.call_soon(loop.call_soon, finished.put_nowait, _TAKEN)
                else:  # the source waits for something: a task carries the step on
                    upcoming = asyncio.ensure_future(_carry_on(step, waiting_on))
                    upcoming.add_done_callback(finished.put_nowait)
            if not running and upcoming is None and not taken:
                return
            done: Any = await finished.get()
            if done is _TAKEN:
                step_done: Any = taken.pop()
            elif done is upcoming:
                upcoming, step_done = None, done
            else:
                running.discard(done)
                yield done.result()  # a job's exception ends the run (finally: the rest stop)
                continue
            try:
                job = _value(step_done)
            except StopAsyncIteration:
                exhausted = True
            else:
                task = asyncio.ensure_future(job())
                running.add(task)
                task.add_done_callback(finished.put_nowait)
    finally:
        left: list[asyncio.Future[Any]] = [*running, *([upcoming] if upcoming else [])]
        for pending in left:
            pending.cancel()
        if left:
            await asyncio.gather(*left, return_exceptions=True)


class _Mailbox:
    """asyncio.Queue as bounded uses it (one reader; a put wakes it, a get with something waiting does not wait),
    without the queue's size, task counting and lists of waiters: two puts and two gets a job."""

    __slots__ = ("_items", "_reader")

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._reader: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            reader.set_result(None)

    async def get(self) -> Any:
        while not self._items:
            self._reader = asyncio.get_running_loop().create_future()
            await self._reader
        return self._items.popleft()


_TAKEN: Any = object()
"""Put on the queue when a step taken in place is due (when a task stepping the source would have reported it)."""


def _value(step: BaseException | asyncio.Future[Any]) -> Any:
    """The job a step of the source gave: taken in place (StopIteration; its end, StopAsyncIteration, or its error:
    raised) or by a task (its result)."""
    if isinstance(step, StopIteration):
        return step.value
    if isinstance(step, BaseException):
        raise step
    return step.result()


async def _carry_on(step: Any, waiting_on: Any) -> Any:
    """The rest of a source step that was started in place and had to wait (on ``waiting_on``)."""
    return await _Resumed(step, waiting_on)


class _Resumed:
    def __init__(self, step: Any, waiting_on: Any) -> None:
        self._step, self._waiting_on = step, waiting_on

    def __await__(self) -> Generator[Any, Any, Any]:
        step, waiting_on = self._step, self._waiting_on
        while True:
            try:
                sent = yield waiting_on
            except BaseException as exc:  # cancelled (or thrown into) while waiting: the step gets it
                try:
                    waiting_on = step.throw(exc)
                except StopIteration as taken:
                    return taken.value
            else:
                try:
                    waiting_on = step.send(sent)
                except StopIteration as taken:
                    return taken.value
