"""The HTTP client every outgoing call uses (the openai backend, the HTTP and OpenAI-chat targets): httpx's
interface on aiohttp's transport (httpx-aiohttp).

Why not httpx's own transport: httpcore's connection pool re-checks every connection it holds (a `poll` syscall
and a `getpeername` each) whenever a request starts or ends, so its CPU per request grows with the calls in
flight. Measured here (issue 13), the official openai client at L = 0.1 s against a loopback stub: 79 requests/s
and 12.4 s of CPU per 1,000 requests at 64 in flight, where aiohttp's pool does 494/s with 1.4 s; at 16 in flight
both are at the latency bound. A run of 200 x 5 conversations spent a fifth of its CPU in that bookkeeping.

httpx-aiohttp maps aiohttp's errors onto httpx's, but a few of them wrongly (a server that drops the connection is
a *connect timeout* there) and some not at all (a malformed status line leaves as a bare aiohttp error). Callers
tell a timeout from a dropped connection (the manifest counts them apart) and catch ``httpx.TransportError``, so
the transport here maps every failure onto the httpx error that says what happened.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import HttpxAiohttpClient
from httpx_aiohttp.transport import AiohttpTransport


def async_client(*, timeout: Any = None, limits: httpx.Limits | None = None, **kwargs: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` on aiohttp's transport; ``limits.max_connections`` caps its connections (all of them
    are kept alive: aiohttp keeps every idle connection up to that cap)."""
    return _Client(
        timeout=timeout if timeout is not None else httpx.Timeout(60.0),
        limits=limits or httpx.Limits(max_connections=100),
        **kwargs,
    )


class _Client(HttpxAiohttpClient):
    def _init_transport(self, *args: Any, limits: httpx.Limits = httpx.Limits(), **kwargs: Any) -> Any:
        transport = kwargs.get("transport")
        if transport is not None:
            return transport
        options = {k: kwargs[k] for k in ("verify", "cert", "trust_env") if k in kwargs}  # TLS and proxy settings
        return _Transport(limits=limits, **options)


class _Transport(AiohttpTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except Exception as exc:
            raise _remapped(exc, request) from exc
        response.stream = _Body(response.stream, request)
        return response


class _Body(httpx.AsyncByteStream):
    """The response body, its read errors mapped as the request's are."""

    def __init__(self, inner: Any, request: httpx.Request) -> None:
        self._inner = inner
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except Exception as exc:
            raise _remapped(exc, self._request) from exc

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        except Exception as exc:
            raise _remapped(exc, self._request) from exc


def _remapped(exc: Exception, request: httpx.Request) -> Exception:
    """The httpx error for a failure of the aiohttp transport (``exc`` may already be httpx-aiohttp's mapping)."""
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) and exc.__cause__ is not None else exc
    message = str(cause) or type(cause).__name__
    if isinstance(cause, aiohttp.ClientConnectorError):
        return httpx.ConnectError(message, request=request)  # refused, unreachable, DNS
    if isinstance(cause, aiohttp.ServerTimeoutError | TimeoutError):
        return httpx.ReadTimeout(message, request=request)
    if isinstance(cause, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return httpx.RemoteProtocolError(message, request=request)  # the peer closed or cut the reply short
    if isinstance(cause, aiohttp.ClientOSError):
        return httpx.ReadError(message, request=request)  # e.g. connection reset by peer
    if isinstance(exc, httpx.HTTPError):
        return exc
    if isinstance(cause, aiohttp.ClientError):
        return httpx.RemoteProtocolError(message, request=request)  # e.g. a malformed status line or header
    return exc
