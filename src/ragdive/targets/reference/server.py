"""The reference RAG over HTTP (starlette), for adapters and other tools to talk to.

Endpoints:
- ``GET /health`` -> ``{"status": "ok", "target": "<description>"}``
- ``POST /sessions`` -> ``{"thread_id": "..."}``: opens a server-side session.
- ``POST /chat`` with ``{"message": ..., and one of "thread_id" | "conversation_id" | "history"}``:
  with ``history`` (a list of {role, content}) the call is stateless; otherwise the server keeps the history of
  the session named by ``thread_id`` (opened by /sessions) or ``conversation_id`` (opened on first use).
  Answers ``{"answer", "contexts": [{text, id, source, score}], "query", ...}``.
- ``POST /v1/chat/completions``: OpenAI-compatible; the last message is the question, earlier user/assistant
  messages are the history. The usual chat completion, plus the retrieved ``contexts`` as an extra field.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...errors import RagdiveError
from ...models import Message
from .rag import ReferenceRAG, describe_reply


class _BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise _BadRequest(f"body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise _BadRequest("body must be a JSON object")
    return body


def _messages(value: Any, field: str) -> list[Message]:
    if not isinstance(value, list):
        raise _BadRequest(f"{field} must be a list of {{role, content}} messages")
    try:
        return [Message.model_validate(m) for m in value]
    except ValueError as exc:
        raise _BadRequest(f"{field}: {exc}".splitlines()[0]) from exc


def create_app(rag: ReferenceRAG) -> Starlette:
    sessions: dict[str, list[Message]] = {}

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "target": rag.describe()})

    async def open_session(request: Request) -> JSONResponse:
        thread_id = uuid.uuid4().hex
        sessions[thread_id] = []
        return JSONResponse({"thread_id": thread_id})

    async def chat(request: Request) -> JSONResponse:
        body = await _json_body(request)
        message = body.get("message")
        if not isinstance(message, str) or not message.strip():
            raise _BadRequest("message must be a non-empty string")
        if "history" in body:
            reply = await rag.answer(message, _messages(body["history"], "history"))
            return JSONResponse(describe_reply(reply))
        key, thread = body.get("thread_id"), True
        if key is None:
            key, thread = body.get("conversation_id"), False
        if not isinstance(key, str) or not key:
            raise _BadRequest("send history (stateless) or a thread_id / conversation_id (server-side session)")
        if key not in sessions:
            if thread:
                raise _BadRequest(f"unknown thread_id {key!r}: open one with POST /sessions", status=404)
            sessions[key] = []
        history = sessions[key]
        reply = await rag.answer(message, list(history))
        history += [Message(role="user", content=message), Message(role="assistant", content=reply.answer)]
        return JSONResponse({**describe_reply(reply), "thread_id" if thread else "conversation_id": key})

    async def chat_completions(request: Request) -> JSONResponse:
        body = await _json_body(request)
        messages = [m for m in _messages(body.get("messages"), "messages") if m.role != "system"]
        if not messages or messages[-1].role != "user":
            raise _BadRequest("messages must end with a user message")
        reply = await rag.answer(messages[-1].content, messages[:-1])
        return JSONResponse(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or "reference-rag",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": (reply.raw or {}).get("usage"),
                "contexts": [c.model_dump() for c in reply.contexts],
            }
        )

    async def bad_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, _BadRequest)
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    async def failed(request: Request, exc: Exception) -> JSONResponse:
        # the generator or an embeddings endpoint failed: a 502 that says why, not a bare 500
        return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=502)

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/sessions", open_session, methods=["POST"]),
            Route("/chat", chat, methods=["POST"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        ],
        exception_handlers={_BadRequest: bad_request, RagdiveError: failed},
    )
