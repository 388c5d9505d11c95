"""The sync edge of the Python API: a coroutine run to its end from plain code, also where an event loop is
already running (a Jupyter notebook); and `run_loop`, the one way a command or the sync API runs an event loop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def sync_of(coroutine: Callable[P, Awaitable[T]]) -> Callable[P, T]:
    """The sync form of the coroutine function ``coroutine`` (``arun`` -> ``run``): the same parameters (a type
    checker and ``inspect.signature`` see them all, through the ParamSpec and ``__wrapped__``), its result waited
    for by `run_sync`. Its docstring is the coroutine's after one line saying so; it belongs to the module that
    calls `sync_of` (as a namedtuple does), so it pickles and documents under the name it is imported by."""
    if not coroutine.__name__.startswith("a"):
        raise ValueError(f"{coroutine.__name__}: a coroutine function's name starts with 'a' (arun -> run)")

    @functools.wraps(coroutine)
    def waited(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(lambda: coroutine(*args, **kwargs))

    waited.__name__ = waited.__qualname__ = coroutine.__name__[1:]
    waited.__module__ = sys._getframe(1).f_globals.get("__name__", coroutine.__module__)
    waited.__doc__ = f"`{coroutine.__name__}`, waited for; works inside a running event loop (Jupyter) too.\n\n" + (
        inspect.cleandoc(coroutine.__doc__ or "")
    )
    return waited


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop where it is installed (a dependency but on Windows), asyncio's own elsewhere or when
    ``RAGDIVE_EVENT_LOOP=asyncio`` (a way out should uvloop misbehave somewhere). Why: a run is the loop's one
    thread busy from end to end (~25,000 turns of the loop in a cached 200 x 5 re-run, a handle for every await that
    resumes, a socket call for every request), and uvloop's turns cost less: ~5 % of that re-run's CPU
    (benchmarks/tail.py)."""
    if os.environ.get("RAGDIVE_EVENT_LOOP", "uvloop") != "asyncio":
        try:
            import uvloop
        except ImportError:  # Windows, or an install without it: asyncio's loop does the same work
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """``main`` run to its end in a new event loop (`new_event_loop`): ``asyncio.run`` (its Ctrl-C handling
    too), the one way every command and the sync API run a loop."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run the coroutine ``make()`` to the end in an event loop of its own. When this thread already runs a loop
    (a notebook), that loop cannot be re-entered: a fresh thread gets the new loop, and this one waits. Ctrl-C
    while waiting cancels the work in that thread (the run is marked ``interrupted``, as on the command line),
    then reaches the caller as KeyboardInterrupt."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_loop(_awaited(make))
    started: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    outcome: dict[str, Any] = {}
    done = threading.Event()  # not Thread.join: a join interrupted by Ctrl-C may return early afterwards
    stopping = threading.Event()

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        started.append((asyncio.get_running_loop(), task))
        if stopping.is_set():  # Ctrl-C came before this loop was there to cancel
            raise asyncio.CancelledError
        return await make()

    def in_thread() -> None:
        try:
            outcome["value"] = run_loop(main())
        except BaseException as exc:  # handed to the caller's thread, whatever it is
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=in_thread, name="ragdive-api")
    worker.start()
    try:
        while not done.wait(0.1):  # short waits: a Ctrl-C is seen here at once, not when the run ends
            pass
    except KeyboardInterrupt:
        stopping.set()
        for loop, task in started:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the work had already ended
                loop.call_soon_threadsafe(task.cancel)
        done.wait()
        worker.join()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
