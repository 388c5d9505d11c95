"""`python` target: a `module:callable` in this process, sync or async.

The callable is called as ``fn(message, history=[{"role", "content"}...], conversation_id=...)`` with only the
keyword arguments its signature accepts, and may return a string, a dict with ``answer`` and ``contexts``, or a
TargetReply. With ``options`` in the config, the callable is a factory: ``factory(**options)`` returns the real one.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

from ..errors import TargetError
from ..importing import import_callable
from ..records import Context, TargetReply
from .base import DialogueState, Target


def coerce_reply(value: Any, latency_s: float) -> TargetReply:
    """Accept the shapes a user's function naturally returns."""
    if isinstance(value, TargetReply):
        return value.model_copy(update={"latency_s": value.latency_s or latency_s})
    if isinstance(value, str):
        return TargetReply(answer=value, latency_s=latency_s, raw=value)
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        contexts = [c if isinstance(c, dict) else {"text": str(c)} for c in value.get("contexts") or []]
        try:
            parsed = [Context.model_validate(c) for c in contexts]
        except ValueError as exc:
            raise TargetError(f"contexts returned by the target are not readable: {exc}") from exc
        return TargetReply(answer=value["answer"], contexts=parsed, latency_s=latency_s, raw=value)
    raise TargetError(
        f"target returned {type(value).__name__}; expected a string, a dict with 'answer' (and 'contexts'), "
        "or a TargetReply"
    )


class PythonTarget(Target):
    def __init__(self, fn: Callable[..., Any], *, name: str = "") -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        self._params = set(params)

    @classmethod
    def from_spec(cls, spec: str, options: dict[str, Any] | None = None) -> PythonTarget:
        fn = import_callable(spec)
        if options:
            fn = fn(**options)
        return cls(fn, name=spec)

    def describe(self) -> str:
        return f"python {self.name}"

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        offered = {
            "history": [m.model_dump() for m in conversation.history],
            "conversation_id": conversation.id,
        }
        kwargs = {k: v for k, v in offered.items() if self._accepts_kwargs or k in self._params}
        start = time.perf_counter()
        try:
            if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
                getattr(self.fn, "__call__", None)  # noqa: B004 - async callable objects
            ):
                value = await self.fn(user_message, **kwargs)
            else:
                # a blocking user function must not stall the other conversations
                value = await asyncio.to_thread(self.fn, user_message, **kwargs)
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"{self.name} raised {type(exc).__name__}: {exc}") from exc
        return coerce_reply(value, time.perf_counter() - start)
