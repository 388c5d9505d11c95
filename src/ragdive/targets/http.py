"""`http` target: any RAG system behind a JSON endpoint, described by a body template and response paths."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..config.target import HttpTargetConfig
from ..errors import TargetError
from ..records import TargetReply
from .base import DialogueState, Target
from .http_support import (
    TargetClient,
    check_reachable,
    compile_path,
    read_answer,
    read_citations,
    read_contexts,
    render_template,
    request_json,
    search,
)

if TYPE_CHECKING:
    import httpx  # a caller's own client: imported by that caller


class HttpTarget(Target):
    def __init__(self, config: HttpTargetConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self._answer = compile_path(config.answer_path, "target.answer_path")
        self._contexts = compile_path(config.contexts_path, "target.contexts_path")
        self._citations = compile_path(config.citations_path, "target.citations_path")
        start = config.session_start
        self._session_id = compile_path(start.id_path, "target.session_start.id_path") if start else None
        self._client: httpx.AsyncClient | TargetClient = client or TargetClient(config.timeout_s)

    async def check_reachable(self) -> None:
        await check_reachable(self.config.url, min(self.config.timeout_s, 10.0))

    def describe(self) -> str:
        return f"http {self.config.method} {self.config.url}"

    async def _call(self, method: str, url: str, body: Any) -> Any:
        return await request_json(
            self._client,
            method,
            url,
            body=body,
            headers=self.config.headers,
            max_retries=self.config.max_retries,
            backoff_s=self.config.retry_backoff_s,
        )

    async def start(self, conversation: DialogueState) -> None:
        start = self.config.session_start
        if start is None or "session_id" in conversation.session:
            return
        body = render_template(start.body, {"conversation_id": conversation.id})
        data = await self._call(start.method, start.url, body)
        value = search(self._session_id, data, f"session_start.id_path {start.id_path!r}", data)
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise TargetError(
                f"session start: id_path {start.id_path!r} found {value!r}, expected a string or number",
                body=str(data)[:2000],
            )
        conversation.session["session_id"] = str(value)

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        await self.start(conversation)  # no-op unless a session must be opened and is not yet
        values = {
            "message": user_message,
            "history": [m.model_dump() for m in conversation.history],
            "conversation_id": conversation.id,
            "session_id": str(conversation.session.get("session_id", conversation.id)),
        }
        body = render_template(self.config.body, values)
        began = time.perf_counter()
        data = await self._call(self.config.method, self.config.url, body)
        latency = time.perf_counter() - began
        answer = read_answer(self._answer, data, self.config.answer_path)
        contexts = []
        if self._contexts is not None:
            found = search(self._contexts, data, f"contexts path {self.config.contexts_path!r}", data)
            contexts = read_contexts(found)
        citations = None
        if self._citations is not None:
            found = search(self._citations, data, f"citations path {self.config.citations_path!r}", data)
            citations = read_citations(found, contexts)
        return TargetReply(answer=answer, contexts=contexts, latency_s=latency, raw=data, citations=citations)

    async def aclose(self) -> None:
        await self._client.aclose()
