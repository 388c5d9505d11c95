"""`llamaindex` target: a LlamaIndex query engine or chat engine as the system under test.

``engine: module:attr`` names an engine, or a factory returning one (called with ``options``). The reply's
``source_nodes`` become the turn's contexts (text, score, node id, the source document, metadata).

- A query engine answers each message alone (``aquery``): it has no memory, so a follow-up reaches it as written;
  that is the system under test's behaviour, recorded as it is.
- A chat engine keeps its own memory per conversation: with a factory, each conversation gets an engine of its own
  (conversations run concurrently); a single engine instance serves one turn at a time, reset and handed that
  conversation's history first (its memory cannot hold two conversations).

llama-index-core is imported only when this target is built (the ``llamaindex`` extra).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..config.target import LlamaIndexTargetConfig
from ..errors import ConfigError, TargetError
from ..importing import import_object
from ..records import Context, TargetReply
from .base import DialogueState, Target


def _engine_types() -> tuple[type, type]:
    try:
        from llama_index.core.base.base_query_engine import BaseQueryEngine
        from llama_index.core.chat_engine.types import BaseChatEngine
    except ImportError as exc:
        raise ConfigError("the llamaindex target needs llama-index-core: pip install 'ragdive[llamaindex]'") from exc
    return BaseQueryEngine, BaseChatEngine


class LlamaIndexTarget(Target):
    def __init__(self, config: LlamaIndexTargetConfig, obj: Any) -> None:  # obj: an engine or a factory
        self.config = config
        query_type, chat_type = _engine_types()
        is_engine = isinstance(obj, query_type | chat_type)
        self._factory = obj if callable(obj) and not is_engine else None
        engine = obj if self._factory is None else self._make()
        if isinstance(engine, chat_type):
            self.kind = "chat"
        elif isinstance(engine, query_type):
            self.kind = "query"
        else:
            raise ConfigError(
                f"llamaindex target {config.engine!r} gave a {type(engine).__name__}; expected a query engine, "
                "a chat engine, or a factory returning one"
            )
        self._shared: Any = engine  # the instance (or the factory's first engine: the query engine all turns use)
        self._one_at_a_time = asyncio.Lock() if self.kind == "chat" and self._factory is None else None

    @classmethod
    def from_config(cls, config: LlamaIndexTargetConfig) -> LlamaIndexTarget:
        _engine_types()
        obj = import_object(config.engine, what="llamaindex target")
        if config.options and not callable(obj):
            raise ConfigError(f"llamaindex target {config.engine!r}: options are given, but it is not a factory")
        return cls(config, obj)

    def _make(self) -> Any:
        assert self._factory is not None
        try:
            return self._factory(**self.config.options)
        except Exception as exc:
            raise ConfigError(f"llamaindex factory {self.config.engine!r} raised {type(exc).__name__}: {exc}") from exc

    def describe(self) -> str:
        return f"llamaindex {self.kind} engine {self.config.engine}"

    async def start(self, conversation: DialogueState) -> None:
        if self.kind != "chat":
            return
        if self._factory is not None:
            conversation.session["engine"] = self._make()

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        began = time.perf_counter()
        try:
            async with asyncio.timeout(self.config.timeout_s):
                if self.kind == "query":
                    response = await self._shared.aquery(user_message)
                elif self._one_at_a_time is None:
                    engine: Any = conversation.session.get("engine") or self._new_session(conversation)
                    response = await engine.achat(user_message)
                else:
                    response = await self._chat_on_shared(conversation, user_message)
        except TimeoutError as exc:
            raise TargetError(f"{self.config.engine} did not answer within {self.config.timeout_s:g} s") from exc
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"{self.config.engine} raised {type(exc).__name__}: {exc}") from exc
        answer = getattr(response, "response", None)
        if answer is None:
            raise TargetError(f"{self.config.engine} answered nothing (response is None)")
        contexts = [_context(n) for n in getattr(response, "source_nodes", None) or []]
        return TargetReply(
            answer=str(answer),
            contexts=contexts,
            latency_s=time.perf_counter() - began,
            raw={"response": str(answer), "source_nodes": len(contexts)},
        )

    def _new_session(self, conversation: DialogueState) -> Any:
        engine = self._make()
        conversation.session["engine"] = engine
        return engine

    async def _chat_on_shared(self, conversation: DialogueState, user_message: str) -> Any:
        """One engine instance serves one conversation at a time: reset, then given this conversation's history,
        so its memory holds this conversation alone."""
        from llama_index.core.llms import ChatMessage

        assert self._one_at_a_time is not None
        async with self._one_at_a_time:
            self._shared.reset()
            history = [ChatMessage(role=m.role, content=m.content) for m in conversation.history]
            return await self._shared.achat(user_message, chat_history=history)


def _context(node_with_score: Any) -> Context:
    node = getattr(node_with_score, "node", node_with_score)
    getter = getattr(node, "get_content", None)
    text = getter() if callable(getter) else getattr(node, "text", None)
    if not isinstance(text, str):
        raise TargetError(f"a source node is a {type(node).__name__} without text")
    metadata = dict(getattr(node, "metadata", None) or {})
    source = getattr(node, "ref_doc_id", None) or metadata.get("source") or metadata.get("file_name")
    score = getattr(node_with_score, "score", None)
    fields: dict[str, Any] = {
        "text": text,
        "id": getattr(node, "node_id", None),
        "source": None if source is None else str(source),
        "score": float(score) if isinstance(score, int | float) else None,
    }
    if metadata:
        fields["metadata"] = {k: v for k, v in metadata.items() if _plain(v)}  # kept beside the context's fields
    return Context.model_validate(fields)


def _plain(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None
