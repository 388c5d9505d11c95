"""`openai/<model>`: any OpenAI-compatible chat endpoint (POST {base_url}/chat/completions).

One backend serves OpenAI itself, Gemini's OpenAI-compatible endpoint, vLLM, Ollama and the llama.cpp server:
set ``base_url``. The key comes from ``api_key`` or the environment variable ``api_key_env`` (OPENAI_API_KEY by
default); a local server without auth needs none. OPENAI_ORG_ID and OPENAI_PROJECT_ID are sent as the official
client sends them.

Why not the official SDK's client: the request is one JSON POST and the reply one JSON object, and the SDK spent
about 4x the CPU per call on it of the same POST on aiohttp (ragdive.http_client, benchmarks/http_clients.py); a
run's model calls are most of its requests, so that was a quarter of a whole run's CPU (200 x 5 conversations at
L = 0.1 s: 10.6 s -> 7.5-8.2 s). The wire format, the errors and the timeouts (5 s to connect, 600 s to read) stay
those of the SDK's defaults.

Structured output negotiates what the server understands, best first, and remembers the first that worked:
``json_schema`` (OpenAI, vLLM, Ollama) → ``json_object`` with a ``schema`` (llama.cpp server: a grammar) →
plain ``json_object`` → ``prompt`` (the schema in the prompt, parsed by the wrapper). A step is dropped only
when the server rejects the request (400/422, or llama-cpp-python's 500) naming the response format in its error.

The backend never retries: the wrapper owns retries. Failures become ModelError with the status, whether a retry
may help, and the server's Retry-After.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from ... import http_client, wire_json
from ..._version import __version__
from ...errors import ConfigError, ModelError
from ...http_client import JsonSession, Reply
from ...redaction import register_secret
from ..base import Completion, GenerateParams, Message, ModelBackend
from ..retry import parse_retry_after, status_is_retryable
from ..structured import schema_instruction, schema_json
from .openai_shape import completion_from_json

OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_POOL = 16
READ_TIMEOUT_S = 600.0
"""Seconds without a byte from the server before a read fails (the SDK's default), unless the wrapper's whole-call
timeout is shorter (see bounded_by)."""
"""Connections before the wrapper says how many calls it will have in flight."""
MODES = ("json_schema", "json_object_schema", "json_object", "prompt")
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_FORMAT_WORDS = ("response_format", "json_schema", "schema", "json_object", "grammar")


class OpenAIBackend(ModelBackend):
    provider = "openai"

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        structured: str = "auto",
        **options: Any,
    ) -> None:
        super().__init__(name, **options)
        self.model_id = name.split("/", 1)[1]
        self.base_url = base_url
        self.api_key_env = api_key_env or DEFAULT_KEY_ENV
        key = api_key or os.environ.get(self.api_key_env)
        # named when the key is refused: the one the user configured, not a guessed variable
        self._key_named = (
            "the api_key in the model's config" if api_key else f"the environment variable {self.api_key_env}"
        )
        if not key:
            if base_url is None:
                raise ConfigError(
                    f"{name}: no API key: set the environment variable {self.api_key_env} "
                    "(or api_key_env / api_key in the model's config), or set base_url for a local server"
                )
            key = "no-key"  # local servers (llama.cpp, vLLM, Ollama) usually ignore it; the SDK wants a value
        register_secret(key)  # a proxy's error text that echoes it is masked wherever ragdive writes or prints it
        if structured != "auto" and structured not in MODES:
            raise ConfigError(f"{name}: options.structured must be auto or one of {', '.join(MODES)}")
        self._modes = list(MODES) if structured == "auto" else [structured]
        self._url = (base_url or OPENAI_URL).rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {key}", "User-Agent": f"ragdive/{__version__}"}
        if base_url is not None and urlsplit(base_url).password is not None:
            # the URL's user:password is sent as basic auth: a key besides it would be a second Authorization
            if key != "no-key":
                raise ConfigError(
                    f"{name}: base_url carries user:password and an API key is set too; one request has one "
                    "Authorization: drop the key (api_key / api_key_env) or the user:password"
                )
            del self._headers["Authorization"]
        for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
            if os.environ.get(variable):
                self._headers[header] = os.environ[variable]
        self._pool = DEFAULT_POOL
        self._read_timeout_s: float | None = READ_TIMEOUT_S
        # An aiohttp pool belongs to one event loop; a Model may be used from several (tests, a CLI calling
        # asyncio.run twice, the Python API's thread), so keep one session per loop.
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, JsonSession] = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], JsonSession] | None = None

    def _session(self) -> JsonSession:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:  # the last loop's session: no WeakKeyDictionary lookup per call
            return last[1]
        session = self._sessions.get(loop)
        if session is None:
            session = self._sessions[loop] = JsonSession(
                connections=self._pool, headers=self._headers, read_timeout_s=self._read_timeout_s
            )
        self._last = (weakref.ref(loop), session)
        return session

    def size_for(self, max_in_flight: int) -> None:
        # One kept-alive connection per slot of the model's limiter: with fewer, every finished call closes a
        # connection and the next one opens a new TCP (and TLS) connection — issue 13 counted 4,778 connects for
        # 12,118 requests at 1,000 in flight through the SDK's client, which keeps 100 alive.
        self._pool = max(self._pool, max_in_flight)

    def bounded_by(self, timeout_s: float) -> None:
        # A read timeout longer than the whole call's can never fire first: without it aiohttp arms no timer at
        # every chunk it reads (two or three timer handles per call, ~1 % of a 200 x 5 run's CPU).
        self._read_timeout_s = None if timeout_s <= READ_TIMEOUT_S else READ_TIMEOUT_S

    @property
    def structured_mode(self) -> str:
        """The structured-output method currently in use (the first one the server accepted)."""
        return self._modes[0]

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
    ) -> Completion:
        request = _params(params)
        if schema is None:
            return await self._send(_wire(messages), request)
        while True:
            mode = self._modes[0]
            try:
                return await self._send(*_structured_request(mode, messages, schema, request))
            except ModelError as exc:
                if len(self._modes) > 1 and _rejects_format(exc):
                    self._modes.pop(0)  # the server does not understand this format: try the next, remember
                    continue
                raise

    async def _send(self, messages: list[dict[str, str]], request: dict[str, Any]) -> Completion:
        extra = request.get("extra_body") or {}
        body = {"model": self.model_id, "messages": messages, **{k: v for k, v in request.items() if k != "extra_body"}}
        try:
            reply = await self._session().post(self._url, {**body, **extra})
        except http_client.TimeoutException as exc:
            raise self._error("timed out", retryable=True) from exc
        except http_client.TransportError as exc:
            raise self._error(f"cannot connect to {self._where()}: {exc}", retryable=True) from exc
        if reply.status >= 400:
            raise self._status_error(reply)
        try:
            return completion_from_json(wire_json.loads(reply.body), self.name)
        except ValueError as exc:  # not JSON, or not a chat completion (e.g. a proxy's HTML page)
            excerpt = reply.body[:200].decode("utf-8", "replace")
            raise self._error(f"unreadable response from {self._where()}: {exc}: {excerpt!r}", retryable=True) from exc

    def _where(self) -> str:
        return self.base_url or "api.openai.com"

    def _error(self, what: str, *, status: int | None = None, retryable: bool, **kw: Any) -> ModelError:
        return ModelError(
            f"{self.name}: {what}", provider=self.provider, model=self.name, status=status, retryable=retryable, **kw
        )

    def _status_error(self, reply: Reply) -> ModelError:
        status = reply.status
        detail = _server_message(reply)
        if status == 401:
            what = (
                f"401 Unauthorized from {self._where()}: the API key was rejected; check {self._key_named} ({detail})"
            )
        elif status == 403:
            what = f"403 Forbidden from {self._where()}: the key ({self._key_named}) may not use this model"
        elif status == 404:
            what = f"404 Not Found from {self._where()}: unknown model {self.model_id!r} or wrong base_url ({detail})"
        else:
            what = f"HTTP {status} from {self._where()}: {detail}"
        return self._error(
            what,
            status=status,
            retryable=status_is_retryable(status),
            retry_after=parse_retry_after(reply.headers),
        )

    async def aclose(self) -> None:
        self._last = None
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.aclose()


def _wire(messages: list[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def _params(params: GenerateParams | None) -> dict[str, Any]:
    """Forward what was set (temperature, seed, max_tokens, stop, and any extra like top_p)."""
    return params.model_dump(exclude_none=True) if params is not None else {}


def _structured_request(
    mode: str, messages: list[Message], schema: type[BaseModel], request: dict[str, Any]
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    wire = _wire(messages)
    body = dict(request)
    if mode == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema_json(schema), "strict": False},
        }
        return wire, body
    # The other modes don't carry the schema to the model itself (and JSON mode insists the prompt says JSON):
    # say it at the end of the last message, where even a weak model still reads it.
    last = wire[-1] if wire else {"role": "user", "content": ""}
    wire = [*wire[:-1], {**last, "content": f"{last['content']}\n\n{schema_instruction(schema)}".lstrip()}]
    if mode == "json_object_schema":
        body["extra_body"] = {"response_format": {"type": "json_object", "schema": schema_json(schema)}}
    elif mode == "json_object":
        body["response_format"] = {"type": "json_object"}
    return wire, body


def _rejects_format(exc: ModelError) -> bool:
    """The server refused the response format itself (not the request as a whole)."""
    text = str(exc).lower()
    if exc.status in (400, 422):
        return any(word in text for word in _FORMAT_WORDS)
    # llama-cpp-python's server answers an unknown response_format type with a 500 wrapping its validation error
    return exc.status == 500 and "response_format" in text


def _server_message(reply: Reply) -> str:
    """The error a server explains itself with, on one line: OpenAI's {"error": {"message": ...}}, FastAPI's
    {"detail": ...}, or the body as text."""
    text = reply.body.decode("utf-8", "replace")
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message is None and "detail" in body:
            message = body["detail"]
        text = str(message if message is not None else body)
    else:
        text = str(body or f"HTTP {reply.status}")
    text = " ".join(text.split())  # servers put tracebacks in here; an error is shown as one line
    return text if len(text) <= 300 else text[:297] + "..."
