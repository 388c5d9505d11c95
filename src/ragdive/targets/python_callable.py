"""`python` target: a `module:callable` in this process, sync or async.

The callable is called as ``fn(message, history=[{"role", "content"}...], conversation_id=...)`` with only the
keyword arguments its signature accepts, and may return a string, a dict with ``answer`` and ``contexts``, or a
TargetReply. With ``options`` in the config, the callable is a factory: ``factory(**options)`` returns the real one.

A call past ``timeout_s`` is a target failure. A blocking function runs in a daemon thread of its own, not in
asyncio's default executor: Python cannot stop a thread, and the executor's threads are joined at exit, so a hung
function there would keep ragdive from exiting after the run had already stopped.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import TargetError
from ..importing import import_callable
from ..records import TargetReply
from .base import DialogueState, Target
from .http_support import read_citations, read_contexts


def coerce_reply(value: Any, latency_s: float) -> TargetReply:
    """Accept the shapes a user's function naturally returns."""
    if isinstance(value, TargetReply):
        return value.model_copy(update={"latency_s": value.latency_s or latency_s})
    if isinstance(value, str):
        return TargetReply(answer=value, latency_s=latency_s, raw=value)
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        contexts = value.get("contexts")
        if isinstance(contexts, list):  # any object in the list as its text (a user's own passage class)
            contexts = [c if isinstance(c, dict | str) else str(c) for c in contexts]
        try:
            parsed = read_contexts(contexts)  # the http target's checks: `contexts: 5` is a TargetError, not a bug
        except (ValueError, TypeError) as exc:
            raise TargetError(f"contexts returned by the target are not readable: {exc}") from exc
        citations = read_citations(value.get("citations"), parsed)
        return TargetReply(answer=value["answer"], contexts=parsed, latency_s=latency_s, raw=value, citations=citations)
    raise TargetError(
        f"target returned {type(value).__name__}; expected a string, a dict with 'answer' (and 'contexts'), "
        "or a TargetReply"
    )


class PythonTarget(Target):
    def __init__(self, fn: Callable[..., Any], *, name: str = "", timeout_s: float | None = 60.0) -> None:
        self.fn = fn
        self.timeout_s = timeout_s
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        self._params = set(params)

    @classmethod
    def from_spec(
        cls, spec: str, options: dict[str, Any] | None = None, *, timeout_s: float | None = 60.0
    ) -> PythonTarget:
        fn = import_callable(spec)
        if options:
            fn = fn(**options)
        return cls(fn, name=spec, timeout_s=timeout_s)

    def describe(self) -> str:
        return f"python {self.name}"

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        offered = {
            "history": [m.model_dump() for m in conversation.history],
            "conversation_id": conversation.id,
        }
        kwargs = {k: v for k, v in offered.items() if self._accepts_kwargs or k in self._params}
        start = time.perf_counter()
        deadline = asyncio.timeout(self.timeout_s)
        try:
            if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
                getattr(self.fn, "__call__", None)  # noqa: B004 - async callable objects
            ):
                call = self.fn(user_message, **kwargs)
            else:
                # a blocking user function must not stall the other conversations
                call = in_daemon_thread(self.fn, user_message, **kwargs)
            async with deadline:
                value = await call
        except TargetError:
            raise
        except Exception as exc:
            if isinstance(exc, TimeoutError) and deadline.expired():
                raise TargetError(f"{self.name} did not answer within {self.timeout_s:g} s") from exc
            raise TargetError(f"{self.name} raised {type(exc).__name__}: {exc}") from exc
        return coerce_reply(value, time.perf_counter() - start)


async def in_daemon_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a daemon thread; awaiting it can be cancelled (the thread is then abandoned)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Any, error: BaseException | None) -> None:
        if future.done():
            return  # the caller gave up (timeout, cancel): nobody waits for this answer
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(outcome)

    def work() -> None:
        try:
            outcome, error = fn(*args, **kwargs), None
        except BaseException as exc:  # handed to the awaiting task, which decides
            outcome, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, outcome, error)
        except RuntimeError:
            pass  # the event loop is closed: the run is over

    threading.Thread(target=work, name="ragdive-python-target", daemon=True).start()
    return await future
