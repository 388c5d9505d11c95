"""The HTTP clients every outgoing call uses, both on aiohttp's connection pool:

- ``JsonSession``: POST a JSON body, read the whole reply, on aiohttp directly (the openai backend: most of a
  run's calls). Client CPU per call against a loopback stub at 64 in flight (``python benchmarks/http_clients.py``):
  0.28 ms, where the official openai SDK's ``post`` on the transport below took 1.1 ms (building httpx requests
  and headers, then parsing the reply into typed models) and plain httpx calls on it 0.58 ms.
- ``httpx_client.async_client``: httpx's interface on aiohttp's transport (httpx-aiohttp), for tests and benchmarks
  that call the targets through an ``httpx.AsyncClient`` as users may pass their own.

Why not httpx's own transport: httpcore's connection pool re-checks every connection it holds (a `poll` syscall
and a `getpeername` each) whenever a request starts or ends, so its CPU per request grows with the calls in
flight. Measured here (issue 13), the official openai client at L = 0.1 s against a loopback stub: 79 requests/s
and 12.4 s of CPU per 1,000 requests at 64 in flight, where aiohttp's pool does 494/s with 1.4 s; at 16 in flight
both are at the latency bound. A run of 200 x 5 conversations spent a fifth of its CPU in that bookkeeping.

httpx-aiohttp maps aiohttp's errors onto httpx's, but a few of them wrongly (a server that drops the connection is
a *connect timeout* there) and some not at all (a malformed status line leaves as a bare aiohttp error). Callers
tell a timeout from a dropped connection (the manifest counts them apart) and catch ``httpx.TransportError``, so
the transport here maps every failure onto the httpx error that says what happened.

httpx itself is imported only when a failure is mapped or caught (``except http_client.TransportError``: the names
of ``_HTTPX_ERRORS`` are httpx's own classes, looked up on first use): a run whose calls all go through
``JsonSession`` never needs it, and importing it (with httpx-aiohttp, and the CLI httpx brings: click, pygments,
rich.syntax) was ~0.03 s of CPU in every `ragdive run`'s start-up (issue 27).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp

from . import wire_json
from .importing import lazy_names

_HTTPX_ERRORS = ("TimeoutException", "TransportError")
"""The error types callers catch, as this module's names: httpx's classes, httpx imported when first asked for."""

if TYPE_CHECKING:
    import httpx
    from httpx import TimeoutException as TimeoutException  # re-exported: callers catch them here
    from httpx import TransportError as TransportError
else:
    __getattr__ = lazy_names(__name__, {"httpx": _HTTPX_ERRORS}, absolute=True)


def remapped_error(exc: Exception, request: httpx.Request | None) -> Exception:
    """The httpx error for a failure of the aiohttp transport (``exc`` may already be httpx-aiohttp's mapping)."""
    import httpx  # a failure: the first one imports it (the module's docstring)

    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) and exc.__cause__ is not None else exc
    message = str(cause) or type(cause).__name__
    if isinstance(cause, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(message, request=request)
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


_UNKNOWN: Any = object()


@dataclass
class Reply:
    """A whole HTTP reply, any status."""

    status: int
    headers: Mapping[str, str]
    """Case-insensitive (aiohttp's multidict)."""
    body: bytes


class JsonSession:
    """Sends JSON over one aiohttp pool of at most ``connections`` connections, every one kept alive. Failures arrive
    as the httpx errors ``httpx_client.async_client`` raises for them (``httpx.TimeoutException`` for a timeout, another
    ``httpx.TransportError`` for a refused, dropped or garbled connection), so callers have one vocabulary.

    ``as_httpx``: behave as ``httpx_client.async_client``'s default client does where a server could tell (the HTTP
    targets): redirects are returned, not followed, cookies are kept from any host (aiohttp's jar refuses those of
    an IP address by default), ``Accept: */*``.

    Create it inside the event loop that uses it (an aiohttp pool belongs to one loop)."""

    def __init__(
        self,
        *,
        connections: int,
        headers: Mapping[str, str] | None = None,
        connect_timeout_s: float | None = 5.0,
        read_timeout_s: float | None = 600.0,
        as_httpx: bool = False,
    ) -> None:
        accept = "*/*" if as_httpx else "application/json"
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections, limit_per_host=0),
            headers={"Content-Type": "application/json", "Accept": accept, **(headers or {})},
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s, sock_read=read_timeout_s),
            skip_auto_headers=("User-Agent",) if headers and "User-Agent" in headers else (),
            cookie_jar=aiohttp.CookieJar(unsafe=True) if as_httpx else None,
        )
        self._follow_redirects = not as_httpx
        self._proxies: dict[tuple[str, str], str | None] = {}
        self._by_url: dict[str, str | None] = {}

    def _proxy(self, url: str) -> str | None:
        """HTTP(S)_PROXY / NO_PROXY for this URL's host, read once per host: aiohttp's own ``trust_env`` reads the
        environment (and ~/.netrc) again on every request, 0.5 ms of CPU each here, more than the request. Looked
        up by the whole URL first (a model's calls all go to one URL: no parsing per call)."""
        proxy = self._by_url.get(url, _UNKNOWN)
        if proxy is not _UNKNOWN:
            return proxy
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc)
        if key not in self._proxies:
            proxies = getproxies()
            found = proxies.get(parts.scheme) or proxies.get("all")
            self._proxies[key] = found if found and not proxy_bypass(parts.hostname or "") else None
        if len(self._by_url) < 1024:  # a target may put ids in its URLs: the cache stays small
            self._by_url[url] = self._proxies[key]
        return self._proxies[key]

    @property
    def connections(self) -> int:
        return int(self._session.connector.limit) if self._session.connector is not None else 0

    async def post(self, url: str, body: Any) -> Reply:
        return await self.request("POST", url, body=body)

    async def request(
        self,
        method: str,
        url: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Send ``body`` as JSON (none: no body), ``params`` in the query string; the whole reply, any status."""
        data = wire_json.dumps(body) if body is not None else None
        try:
            async with self._session.request(
                method,
                url,
                data=data,
                params=params,
                headers=headers,
                proxy=self._proxy(url),
                allow_redirects=self._follow_redirects,
            ) as response:
                return Reply(response.status, response.headers, await response.read())
        except Exception as exc:
            raise remapped_error(exc, None) from exc

    async def aclose(self) -> None:
        await self._session.close()
