"""ragdive.http_client against a real socket on loopback: every way a server can fail arrives as the httpx error that
names it (callers count a timeout apart from a dropped connection, and catch httpx.TransportError), through both
clients: httpx's interface on aiohttp (async_client) and aiohttp directly (JsonSession)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import httpx
import pytest

from ragdive.http_client import JsonSession, Reply
from ragdive.httpx_client import async_client

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def serve(handler: Handler) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/"


async def read_request(reader: asyncio.StreamReader) -> None:
    await reader.readuntil(b"\r\n\r\n")


def replying(data: bytes) -> Handler:
    """A server that reads the request, writes ``data`` and hangs up."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(data)
        await writer.drain()
        writer.close()

    return handler


ok = replying(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a": true}')
drop = replying(b"")  # no reply at all
cut_short = replying(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial"')
garbage = replying(b"this is not HTTP at all\r\n\r\n")


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    await asyncio.sleep(5)


CLIENTS = ("httpx-interface", "json-session")


async def request(handler: Handler, timeout: float = 5.0, client: str = "httpx-interface") -> httpx.Response | Reply:
    server, url = await serve(handler)
    try:
        if client == "json-session":
            session = JsonSession(connections=4, read_timeout_s=timeout)
            try:
                return await session.post(url, {"q": 1})
            finally:
                await session.aclose()
        async with async_client(timeout=httpx.Timeout(timeout)) as http:
            response = await http.post(url, json={"q": 1})
            await response.aread()
            return response
    finally:
        server.close()


async def test_a_plain_reply_reads_as_with_httpx() -> None:
    response = await request(ok)
    assert isinstance(response, httpx.Response)
    assert response.status_code == 200 and response.json() == {"a": True}


async def test_a_plain_reply_reads_whole_through_the_json_session() -> None:
    reply = await request(ok, client="json-session")
    assert isinstance(reply, Reply)
    assert reply.status == 200 and reply.body == b'{"a": true}' and reply.headers["content-type"] == "application/json"


async def test_the_json_session_sends_json_with_its_headers() -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(
            next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")).split(b":")[1]
        )
        seen.append(head + await reader.readexactly(length))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        await writer.drain()
        writer.close()

    server, url = await serve(record)
    session = JsonSession(connections=1, headers={"Authorization": "Bearer k", "User-Agent": "ragdive/test"})
    try:
        await session.post(url, {"q": "é"})
    finally:
        await session.aclose()
        server.close()
    head, _, payload = seen[0].partition(b"\r\n\r\n")
    lines = {line.split(b":", 1)[0].lower(): line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")[1:]}
    assert lines[b"content-type"] == b"application/json" and lines[b"authorization"] == b"Bearer k"
    assert lines[b"user-agent"] == b"ragdive/test"
    assert payload.decode("utf-8") == '{"q":"é"}'  # UTF-8, compact (wire_json)


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (drop, httpx.RemoteProtocolError),
        (cut_short, httpx.RemoteProtocolError),
        (garbage, httpx.RemoteProtocolError),
    ],
)
@pytest.mark.parametrize("client", CLIENTS)
async def test_a_server_that_fails_mid_exchange_is_a_protocol_error_not_a_timeout(
    handler: Handler, expected: type[Exception], client: str
) -> None:
    with pytest.raises(expected) as caught:
        await request(handler, client=client)
    assert not isinstance(caught.value, httpx.TimeoutException)
    assert isinstance(caught.value, httpx.TransportError)


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_silent_server_is_a_read_timeout(client: str) -> None:
    with pytest.raises(httpx.ReadTimeout):
        await request(silent, timeout=0.3, client=client)


async def test_nobody_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nobody listens there
    async with async_client(timeout=httpx.Timeout(2.0)) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")
    session = JsonSession(connections=1)
    try:
        with pytest.raises(httpx.ConnectError):
            await session.post(f"http://127.0.0.1:{port}/", {})
    finally:
        await session.aclose()


async def test_the_json_session_goes_through_the_environment_s_proxy_unless_no_proxy_names_the_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HTTP_PROXY / NO_PROXY as httpx and the official client honour them (read once per host, not per call)."""
    request_lines: list[bytes] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        request_lines.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        await writer.drain()
        writer.close()

    server, proxy_url = await serve(proxy)
    for variable in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    session = JsonSession(connections=2)
    try:
        reply = await session.post("http://model-host.invalid:8000/v1/chat/completions", {})
        assert reply.status == 200
        assert request_lines == [b"POST http://model-host.invalid:8000/v1/chat/completions HTTP/1.1"]
        # the proxy's own address is in NO_PROXY: that request goes to it directly, as to any server
        await session.post(proxy_url + "direct", {})
        assert request_lines[1] == b"POST /direct HTTP/1.1"
    finally:
        await session.aclose()
        server.close()


def test_the_error_types_callers_catch_are_httpxs_own_and_httpx_is_imported_only_when_asked_for() -> None:
    """A run never needs httpx (its calls go through JsonSession); `except http_client.TransportError` still
    catches httpx's own classes, importing httpx the first time a clause asks."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import ragdive

    probe = (
        "import sys; import ragdive.http_client as h; print('httpx' in sys.modules); "
        "t = h.TransportError; import httpx; print(t is httpx.TransportError, h.TimeoutException is "
        "httpx.TimeoutException, issubclass(httpx.ReadTimeout, h.TimeoutException))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(ragdive.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["False", "True", "True", "True"]
    import ragdive.http_client as in_this_process

    with pytest.raises(AttributeError):
        _ = in_this_process.NotAnError  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "HTTP://LocalHost/x",
        "https://[::1]:9/x",
        "https://example.org/x",
        "http://bücher.de/x",
        "http://u:p@h.example:81/x",
        "localhost:8000/x",
        "/relative",
    ],
)
def test_a_targets_host_and_port_are_read_as_httpx_reads_them(url: str) -> None:
    from ragdive.targets.http_support import host_and_port

    parsed = httpx.URL(url)
    default = 443 if parsed.scheme == "https" else 80
    assert host_and_port(url) == (parsed.scheme, parsed.host, parsed.port or default)


@pytest.mark.parametrize("url", ["http://localhost:abc/v1", "http://localhost:99999/v1"])
def test_a_target_url_whose_port_is_not_one_is_a_config_error(url: str) -> None:
    """One readable line (ConfigError), not the URL parser's ValueError as a traceback."""
    from ragdive.errors import ConfigError
    from ragdive.targets.http_support import check_reachable

    with pytest.raises(ConfigError, match="target url .*Port"):
        asyncio.run(check_reachable(url))
