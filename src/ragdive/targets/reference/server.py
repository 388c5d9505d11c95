"""The reference RAG over HTTP (starlette), for adapters and other tools to talk to.

Endpoints:
- ``GET /health`` -> ``{"status": "ok", "target": "<description>"}`` (no token needed: a liveness probe).
- ``POST /sessions`` -> ``{"thread_id": "..."}``: opens a server-side session under an unguessable id.
- ``POST /chat`` with ``{"message": ..., and one of "thread_id" | "conversation_id" | "history"}``:
  with ``history`` (a list of {role, content}) the call is stateless; otherwise the server keeps the history of
  the session named by ``thread_id`` (opened by /sessions). A client-chosen ``conversation_id`` opens a session
  on first use only when the server allows it (``client_session_ids``): anyone who knows or guesses such an id
  reads that conversation's history.
  Answers ``{"answer", "contexts": [{text, id, source, score}], "query", ...}``.
- ``POST /v1/chat/completions``: OpenAI-compatible; the last message is the question, earlier user/assistant
  messages are the history. The usual chat completion, plus the retrieved ``contexts`` as an extra field.

Hardened for a port other programs can reach: an optional bearer token (compared in constant time), JSON bodies
only (415 otherwise: a web page's form post or text/plain fetch is refused before it is parsed), a body size limit
(413), and every malformed request (invalid UTF-8, a lone surrogate, JSON nested past the parser, a wrong field)
a 4xx with a JSON ``{"error"}``; an unknown path 404 and a wrong method 405, also JSON. Nothing answers with a
traceback.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
import uuid
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ...errors import RagdiveError
from ...models import Message
from .rag import ReferenceRAG, describe_reply

MAX_BODY_BYTES = 1_000_000
"""A chat request is a message and at most a history: a megabyte is far above any real one."""


class _BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BadRequest(f"body is larger than {limit} bytes", status=413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:  # a chunked body without a length is cut off here, not read into memory whole
            raise _BadRequest(f"body is larger than {limit} bytes", status=413)
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request, limit: int) -> dict[str, Any]:
    if not _is_json(request.headers.get("content-type", "")):
        raise _BadRequest("send the body as JSON (content-type: application/json)", status=415)
    raw = await _body(request, limit)
    try:
        body = json.loads(raw.decode("utf-8"))
        json.dumps(body, ensure_ascii=False).encode("utf-8")  # a lone surrogate (\ud800) is refused here
    except UnicodeError as exc:
        raise _BadRequest(f"body is not valid UTF-8 text: {getattr(exc, 'reason', exc)}") from exc
    except RecursionError as exc:
        raise _BadRequest("body is nested too deeply") from exc
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


class _RequireToken:
    """Every path but /health needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") != "/health":
            sent = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(sent, self.expected):
                response = _error("missing or wrong bearer token", 401, {"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(
    rag: ReferenceRAG,
    *,
    token: str | None = None,
    client_session_ids: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> ASGIApp:
    sessions: dict[str, list[Message]] = {}

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "target": rag.describe()})

    async def open_session(request: Request) -> JSONResponse:
        await _body(request, max_body_bytes)  # whatever it sent (nothing is needed) is bounded too
        thread_id = secrets.token_urlsafe(24)  # unguessable: the id is the only key to the session's history
        sessions[thread_id] = []
        return JSONResponse({"thread_id": thread_id})

    async def chat(request: Request) -> JSONResponse:
        body = await _json_body(request, max_body_bytes)
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
            if not client_session_ids:
                raise _BadRequest(
                    "this server issues session ids: open one with POST /sessions and send its thread_id "
                    "(client-chosen conversation_id needs serve-rag --client-session-ids)",
                    status=404,
                )
            sessions[key] = []
        history = sessions[key]
        reply = await rag.answer(message, list(history))
        history += [Message(role="user", content=message), Message(role="assistant", content=reply.answer)]
        return JSONResponse({**describe_reply(reply), "thread_id" if thread else "conversation_id": key})

    async def chat_completions(request: Request) -> JSONResponse:
        body = await _json_body(request, max_body_bytes)
        messages = [m for m in _messages(body.get("messages"), "messages") if m.role != "system"]
        if not messages or messages[-1].role != "user":
            raise _BadRequest("messages must end with a user message")
        model = body.get("model")
        reply = await rag.answer(messages[-1].content, messages[:-1])
        return JSONResponse(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model if isinstance(model, str) and model else "reference-rag",
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

    async def bad_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, _BadRequest)
        return _error(str(exc), exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)  # 404 unknown path, 405 wrong method: JSON like every other error
        return _error(exc.detail, exc.status_code, dict(exc.headers or {}))

    async def failed(request: Request, exc: Exception) -> Response:
        # the generator or an embeddings endpoint failed: a 502 that says why, not a bare 500
        return _error(f"{type(exc).__name__}: {exc}", 502)

    async def crashed(request: Request, exc: Exception) -> Response:
        return _error("internal error (see the server's log)", 500)  # never a traceback in the response

    app: ASGIApp = Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/sessions", open_session, methods=["POST"]),
            Route("/chat", chat, methods=["POST"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        ],
        exception_handlers={
            _BadRequest: bad_request,
            HTTPException: http_error,
            RagdiveError: failed,
            Exception: crashed,
        },
    )
    return _RequireToken(app, token) if token else app
