"""`langchain` target: a LangChain Runnable that returns an answer and its source documents.

langchain-core is imported only when this target is built (the `langchain` extra), so ragdive never needs it
otherwise."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..config.target import LangChainTargetConfig
from ..errors import ConfigError, TargetError
from ..importing import import_object
from ..records import Context, TargetReply
from .base import DialogueState, Target


def _require_langchain() -> Any:
    try:
        import langchain_core.runnables as runnables
    except ImportError as exc:
        raise ConfigError("the langchain target needs langchain-core: pip install 'ragdive[langchain]'") from exc
    return runnables


class LangChainTarget(Target):
    def __init__(self, runnable: Any, config: LangChainTargetConfig) -> None:
        runnables = _require_langchain()
        if not isinstance(runnable, runnables.Runnable):
            raise ConfigError(f"langchain target {config.runnable!r} is not a Runnable (got {type(runnable).__name__})")
        self.runnable = runnable
        self.config = config

    @classmethod
    def from_config(cls, config: LangChainTargetConfig) -> LangChainTarget:
        _require_langchain()
        obj = import_object(config.runnable, what="langchain target")
        if config.options:
            obj = obj(**config.options)
        return cls(obj, config)

    def describe(self) -> str:
        return f"langchain {self.config.runnable}"

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        payload: dict[str, Any] = {self.config.input_key: user_message}
        if self.config.history_key:
            # (role, text) tuples are what LangChain's MessagesPlaceholder accepts; "assistant" maps to "ai"
            payload[self.config.history_key] = [
                ("ai" if m.role == "assistant" else m.role, m.content) for m in conversation.history
            ]
        began = time.perf_counter()
        try:
            async with asyncio.timeout(self.config.timeout_s):
                result = await self.runnable.ainvoke(payload)
        except TimeoutError as exc:
            raise TargetError(f"{self.config.runnable} did not answer within {self.config.timeout_s:g} s") from exc
        except Exception as exc:
            raise TargetError(f"{self.config.runnable} raised {type(exc).__name__}: {exc}") from exc
        latency = time.perf_counter() - began
        answer, documents = self._unpack(result)
        return TargetReply(
            answer=answer, contexts=[_context(d) for d in documents], latency_s=latency, raw=_jsonable(result)
        )

    def _unpack(self, result: Any) -> tuple[str, list[Any]]:
        if isinstance(result, str):
            return result, []
        if isinstance(getattr(result, "content", None), str):  # an AIMessage
            return result.content, []
        if isinstance(result, dict):
            answer: Any = result.get(self.config.answer_key)
            answer = getattr(answer, "content", answer)  # a message: its text
            if isinstance(answer, str):
                return answer, list(result.get(self.config.contexts_key) or [])
        raise TargetError(
            f"{self.config.runnable} returned {type(result).__name__}; expected a string, a message, or a dict "
            f"with {self.config.answer_key!r} (and {self.config.contexts_key!r})"
        )


def _context(doc: Any) -> Context:
    if isinstance(doc, str):
        return Context(text=doc)
    text = getattr(doc, "page_content", None)
    if not isinstance(text, str):
        raise TargetError(f"a source document is a {type(doc).__name__}, not a Document or a string")
    meta = getattr(doc, "metadata", None) or {}
    ident = getattr(doc, "id", None) or meta.get("id")
    source = meta.get("source")
    score = meta.get("score")
    return Context(
        text=text,
        id=None if ident is None else str(ident),
        source=None if source is None else str(source),
        score=float(score) if isinstance(score, int | float) else None,
    )


def _jsonable(result: Any) -> Any:
    if isinstance(result, dict):
        return {k: _jsonable(v) for k, v in result.items()}
    if isinstance(result, list):
        return [_jsonable(v) for v in result]
    if isinstance(result, str | int | float | bool) or result is None:
        return result
    return repr(result)
