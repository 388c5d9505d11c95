"""A fault-injecting OpenAI-compatible server on loopback, for tests and reliability/throughput harnesses.

    with StubServer() as server:
        server.plan(Fault.rate_limited(retry_after=0.2), Fault.error(500), Fault.hang(5), Fault.garbage())
        ...  # point an openai client at server.base_url
        assert server.request_count == 5

Each request to ``POST /v1/chat/completions`` takes the next fault from the plan (or, once it is used up, a random
fault drawn by ``server.chaos(FaultRates(...))`` when set, else ``Fault.ok()``). A normal answer is
``reply(request_json)`` when given, else a JSON instance of the requested
schema (``response_format``) or a short echo. The server runs uvicorn in a background thread on its own event
loop, bound to 127.0.0.1 on a free port. It counts every request; it keeps them (``server.requests``) only when
started with ``keep_requests=True``: a benchmark sending hundreds of thousands of requests would otherwise hold
every body (~5 KB each, ~2 GB at 10,000 conversations x 5).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .faults import Fault, FaultRates, ReceivedRequest, fault_from_dict
from .schema_example import example_for_schema

Reply = Callable[[dict[str, Any]], "str | dict[str, Any]"]
"""Answers a request body: the message text, or ``{"text": ..., "extra": {...}}`` where ``extra`` goes into the
completion's top level (e.g. ``contexts``, as RAG servers with an OpenAI-shaped API add them)."""


class StubServer:
    def __init__(
        self,
        *,
        reply: Reply | None = None,
        api_key: str | None = None,
        model: str = "stub-model",
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        keep_requests: bool = False,
    ) -> None:
        """``keep_requests``: keep every request received for ``requests`` (off: only counted).
        ``api_key``: when set, requests without ``Authorization: Bearer <api_key>`` get 401. ``latency_s``: every
        normal answer waits this long first (awaited, so concurrent requests wait side by side, as on a server
        with spare capacity): a fixed-latency model for benchmarks."""
        self.reply = reply
        self.latency_s = latency_s
        self.in_flight = 0
        self.peak_in_flight = 0
        """Most chat requests being answered at once since the start (or the last reset)."""
        self.api_key = api_key
        self.model = model
        self.host = host
        self.port = port
        self.keep_requests = keep_requests
        self._requests: list[ReceivedRequest] = []
        self._count = 0
        self.embedding_requests = 0
        self._faults: deque[Fault] = deque()
        self._rates: FaultRates | None = None
        self._rng = random.Random(0)
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # --- programming and inspecting ------------------------------------------------------------------------

    def plan(self, *faults: Fault) -> StubServer:
        """Queue what the next requests get, in order; after the plan, requests are answered normally."""
        with self._lock:
            self._faults.extend(faults)
        return self

    def chaos(self, rates: FaultRates | None) -> StubServer:
        """Random faults at these rates for every request past the plan (None: no random faults)."""
        with self._lock:
            if rates is not None and not 0 <= rates.transport + rates.content <= 1:
                raise ValueError("fault rates must be in [0, 1] and add up to at most 1")
            self._rates = rates
            self._rng = random.Random(rates.seed if rates else 0)
        return self

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self._requests.clear()
            self._count = 0
            self.peak_in_flight = self.in_flight
            self._rates = None

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received since the start (or the last reset); only with ``keep_requests=True``."""
        if not self.keep_requests:
            raise RuntimeError("this stub server only counts requests: start it with keep_requests=True")
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return self._count

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> StubServer:
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on sockets that say they are TCP, and without
        # it every keep-alive response waits ~40 ms on Nagle + delayed ACK (measured: 44 ms vs 1 ms per call).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))  # port 0: the OS picks a free one, no race between pick and bind
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            access_log=False,
            timeout_keep_alive=30,  # above clients' 5 s keep-alive: no reuse of a connection being closed
            backlog=4096,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=f"stub-server-{self.port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("stub server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the app ---------------------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                # control API, so a harness can program a server running in another process (StubProcess)
                Route("/_stub/plan", self._control_plan, methods=["POST"]),
                Route("/_stub/reset", self._control_reset, methods=["POST"]),
                Route("/_stub/chaos", self._control_chaos, methods=["POST"]),
                Route("/_stub/latency", self._control_latency, methods=["POST"]),
                Route("/_stub/requests", self._control_requests, methods=["GET"]),
                Route("/_stub/stats", self._control_stats, methods=["GET"]),
            ]
        )

    async def _control_plan(self, request: Request) -> Response:
        self.plan(*(fault_from_dict(item) for item in (await request.json())["faults"]))
        return JSONResponse({"planned": len(self._faults)})

    async def _control_chaos(self, request: Request) -> Response:
        rates = (await request.json()).get("rates")
        self.chaos(FaultRates(**rates) if rates else None)
        return JSONResponse({"chaos": rates})

    async def _control_latency(self, request: Request) -> Response:
        self.latency_s = float((await request.json())["seconds"])
        return JSONResponse({"latency_s": self.latency_s})

    async def _control_reset(self, request: Request) -> Response:
        self.reset()
        return JSONResponse({"reset": True})

    async def _control_requests(self, request: Request) -> Response:
        if not self.keep_requests:
            return _error(409, "this stub server only counts requests: start it with --keep-requests")
        with self._lock:
            items = [{**asdict(r), "fault": asdict(r.fault)} for r in self._requests]
        return JSONResponse({"count": len(items), "requests": items})

    async def _control_stats(self, request: Request) -> Response:
        with self._lock:
            return JSONResponse(
                {"count": self._count, "peak_in_flight": self.peak_in_flight, "in_flight": self.in_flight}
            )

    async def _embeddings(self, request: Request) -> Response:
        """A fixed 3-number vector per input (for libraries that embed, e.g. Ragas' answer similarity), counted."""
        body = await request.json()
        inputs = body.get("input")
        inputs = inputs if isinstance(inputs, list) else [inputs]
        with self._lock:
            self.embedding_requests += 1
        data = [{"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]} for i in range(len(inputs))]
        return JSONResponse({"object": "list", "data": data, "model": self.model, "usage": {"prompt_tokens": 1}})

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    def _next_fault(self, request: Request, body: dict[str, Any]) -> Fault:
        with self._lock:
            if self._faults:
                fault = self._faults.popleft()
            elif self._rates is not None:
                fault = self._rates.draw(self._rng)
            else:
                fault = Fault.ok()
            self._count += 1
            if self.keep_requests:
                headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
                self._requests.append(ReceivedRequest(request.url.path, body, headers, fault))
        return fault

    async def _chat(self, request: Request) -> Response:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer_chat(request)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _answer_chat(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "request body is not JSON")
        fault = self._next_fault(request, body)
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided", code="invalid_api_key")
        if fault.kind == "status":
            headers = {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
            return _error(fault.status, fault.body, headers=headers)
        if fault.kind == "hang":
            await _sleep_unless_gone(request, fault.seconds)
            return _error(504, "hung request finally answered")
        if fault.kind == "garbage":
            return PlainTextResponse(fault.body, media_type="application/json")
        if fault.kind == "reset":
            return _ResetResponse()
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text, extra = self._answer(body)
        if fault.kind == "truncated":
            text = text[: max(1, len(text) // 2)]
        elif fault.body:
            text = fault.body
        return JSONResponse({**_completion(body, text, self.model), **extra})

    def _answer(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if self.reply is not None:
            answer = self.reply(body)
            return (answer, {}) if isinstance(answer, str) else (str(answer["text"]), dict(answer.get("extra") or {}))
        return self._default_answer(body), {}

    def _default_answer(self, body: dict[str, Any]) -> str:
        schema = _requested_schema(body.get("response_format"))
        if schema is not None:
            return json.dumps(example_for_schema(schema))
        messages = body.get("messages") or [{}]
        return f"stub answer to: {str(messages[-1].get('content', ''))[:200]}"


def _requested_schema(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema") or {}
    if response_format.get("type") == "json_object":
        return response_format.get("schema") or {}
    return None


def _completion(request: dict[str, Any], text: str, model: str) -> dict[str, Any]:
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    completion_tokens = len(text.split())
    return {
        "id": f"chatcmpl-stub-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"},
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class _QuietResets(logging.Filter):
    """uvicorn logs an error for every response the app leaves unfinished; for a planned reset that is the point."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing response" not in record.getMessage()


logging.getLogger("uvicorn.error").addFilter(_QuietResets())


class _ResetResponse(Response):
    """Headers promising a body, half a body, then the connection dropped: the client reads a peer that went away
    mid-answer. (Returning from the ASGI app with the response unfinished makes uvicorn close the transport.)"""

    def __init__(self) -> None:
        super().__init__(status_code=200)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"4096")]})
        await send({"type": "http.response.body", "body": b'{"id": "chatcmpl-res', "more_body": True})


def _error(status: int, message: str, *, code: str | None = None, headers: dict[str, str] | None = None) -> Response:
    body = {"error": {"message": message, "type": "stub_error", "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


async def _sleep_unless_gone(request: Request, seconds: float) -> None:
    """Hang, but stop early once the client hung up (so a stopped test doesn't keep the server busy)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await request.is_disconnected():
            return
        await asyncio.sleep(min(0.05, max(0.0, deadline - time.monotonic())))


def main() -> None:
    """``python -m ragdive.testing [--port N] [--api-key K] [--keep-requests]``: serve until stopped; the first
    stdout line is the base URL (StubProcess reads it)."""
    import argparse

    parser = argparse.ArgumentParser(description="Serve the ragdive stub OpenAI-compatible API on loopback.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--reply", default=None, help="module:function answering a request body with text")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds every normal answer waits")
    parser.add_argument("--keep-requests", action="store_true", help="keep every request for /_stub/requests")
    args = parser.parse_args()
    reply = load_reply(args.reply) if args.reply else None
    server = StubServer(
        port=args.port, api_key=args.api_key, reply=reply, latency_s=args.latency, keep_requests=args.keep_requests
    )
    with server:
        print(server.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


def load_reply(spec: str) -> Reply:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
