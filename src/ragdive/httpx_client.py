"""httpx's interface on aiohttp's connection pool (httpx-aiohttp), for tests and benchmarks that call the HTTP
targets through an ``httpx.AsyncClient``, as users may pass their own: failures mapped onto httpx's errors as
``http_client.JsonSession``'s are (see http_client.py, which says why aiohttp's pool and why the mapping). Its own
module so that a run, whose calls all go through ``JsonSession``, never imports httpx."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_aiohttp import HttpxAiohttpClient
from httpx_aiohttp.transport import AiohttpTransport

from .http_client import remapped_error


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
            raise remapped_error(exc, request) from exc
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
            raise remapped_error(exc, self._request) from exc

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        except Exception as exc:
            raise remapped_error(exc, self._request) from exc
