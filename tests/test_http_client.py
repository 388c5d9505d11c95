"""ragdive.http_client against a real socket on loopback: every way a server can fail arrives as the httpx error that
names it (callers count a timeout apart from a dropped connection, and catch httpx.TransportError)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import httpx
import pytest

from ragdive.http_client import async_client

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


async def request(handler: Handler, timeout: float = 5.0) -> httpx.Response:
    server, url = await serve(handler)
    try:
        async with async_client(timeout=httpx.Timeout(timeout)) as client:
            response = await client.post(url, json={"q": 1})
            await response.aread()
            return response
    finally:
        server.close()


async def test_a_plain_reply_reads_as_with_httpx() -> None:
    response = await request(ok)
    assert response.status_code == 200 and response.json() == {"a": True}


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (drop, httpx.RemoteProtocolError),
        (cut_short, httpx.RemoteProtocolError),
        (garbage, httpx.RemoteProtocolError),
    ],
)
async def test_a_server_that_fails_mid_exchange_is_a_protocol_error_not_a_timeout(
    handler: Handler, expected: type[Exception]
) -> None:
    with pytest.raises(expected) as caught:
        await request(handler)
    assert not isinstance(caught.value, httpx.TimeoutException)
    assert isinstance(caught.value, httpx.TransportError)


async def test_a_silent_server_is_a_read_timeout() -> None:
    with pytest.raises(httpx.ReadTimeout):
        await request(silent, timeout=0.3)


async def test_nobody_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nobody listens there
    async with async_client(timeout=httpx.Timeout(2.0)) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")
