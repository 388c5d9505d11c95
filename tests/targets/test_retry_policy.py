"""The HTTP targets retry under the model layer's policy (ragdive.retrying): Retry-After honoured, jittered
backoff, the same faults retried — against the fault stub on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ragdive.config import OpenAIChatTargetConfig
from ragdive.errors import TargetError
from ragdive.retrying import RetryPolicy
from ragdive.targets import build_target
from ragdive.targets.base import DialogueState
from ragdive.targets.http_support import request_json
from ragdive.testing import Fault, StubServer


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    with StubServer(reply=lambda body: "the answer") as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(stub: StubServer) -> None:
    stub.reset()


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


async def call(stub: StubServer, waits: Waits, *, max_retries: int = 3, timeout: float = 5.0) -> object:
    async with httpx.AsyncClient(timeout=timeout) as client:
        return await request_json(
            client,
            "POST",
            f"{stub.base_url}/chat/completions",
            body={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            max_retries=max_retries,
            backoff_s=0.01,
            sleep=waits,
        )


async def test_429_is_retried_after_the_servers_retry_after(stub: StubServer) -> None:
    stub.plan(Fault.rate_limited(retry_after=2))
    waits = Waits()
    data = await call(stub, waits)
    assert isinstance(data, dict) and data["choices"][0]["message"]["content"] == "the answer"
    assert stub.request_count == 2
    (wait,) = waits.seconds
    assert 2.0 <= wait <= 2.2  # Retry-After, plus at most 10 % jitter


@pytest.mark.parametrize(
    "fault",
    [Fault.error(503), Fault.reset(), Fault.garbage(), Fault.hang(3), Fault.error(408)],
    ids=["503", "reset", "not-json", "hang", "408"],
)
async def test_transport_faults_are_retried_like_model_calls(stub: StubServer, fault: Fault) -> None:
    stub.plan(fault, fault)
    waits = Waits()
    data = await call(stub, waits, timeout=0.5)
    assert isinstance(data, dict) and "choices" in data
    assert stub.request_count == 3 and len(waits.seconds) == 2


async def test_backoff_is_jittered_exponential(stub: StubServer) -> None:
    stub.plan(*[Fault.error(500)] * 4)
    waits = Waits()
    await call(stub, waits, max_retries=4)
    policy = RetryPolicy(backoff_s=0.01)
    assert len(waits.seconds) == 4
    for attempt, wait in enumerate(waits.seconds):
        ceiling = min(policy.max_backoff_s, 0.01 * 2**attempt)
        assert ceiling / 2 <= wait <= ceiling  # "equal jitter": half fixed, half random


async def test_a_client_error_is_not_retried_and_exhaustion_is_named(stub: StubServer) -> None:
    stub.plan(Fault.error(400, "bad request body"))
    waits = Waits()
    with pytest.raises(TargetError, match="HTTP 400: .*bad request body"):
        await call(stub, waits)
    assert stub.request_count == 1 and waits.seconds == []
    stub.reset()
    stub.plan(*[Fault.error(503, "still down")] * 3)
    with pytest.raises(TargetError, match=r"HTTP 503: .*still down.* \(after 3 attempts\)"):
        await call(stub, Waits(), max_retries=2)


async def test_openai_chat_target_rides_out_a_rate_limit(stub: StubServer) -> None:
    stub.plan(Fault.rate_limited(retry_after=0.05), Fault.reset())
    target = build_target(OpenAIChatTargetConfig(base_url=stub.base_url, retry_backoff_s=0.01, max_retries=2))
    try:
        reply = await target.respond(DialogueState(id="c1"), "hello?")
    finally:
        await target.aclose()
    assert reply.answer == "the answer" and stub.request_count == 3


async def test_reachability_is_a_connection_and_a_proxy_is_left_to_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from ragdive.targets.http_support import check_reachable

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(TargetError, match=f"unreachable: cannot connect to 127.0.0.1:{port}"):
        await check_reachable(f"http://127.0.0.1:{port}/chat")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    await check_reachable(f"http://10.255.255.1:{port}/chat")  # through a proxy: not checked directly


@pytest.mark.parametrize("kind", ["own", "httpx"])
async def test_the_targets_own_client_behaves_as_httpx_where_a_server_can_tell(kind: str) -> None:
    """The HTTP targets' default client (aiohttp's pool, not httpx): a redirect is returned, not followed (so a
    moved endpoint is an error, as with httpx's client), a cookie set by a server on an IP address is sent back
    (aiohttp's jar refuses those by default), a charset in the reply decodes the error text, and the same
    error types come out."""
    import asyncio

    from ragdive.targets.http_support import TargetClient

    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")), 0
        )
        await reader.readexactly(length)
        seen.append(head)
        path = head.split(b" ")[1]
        if path == b"/moved":
            reply = (
                b"HTTP/1.1 307 Temporary Redirect\r\nConnection: close\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n"
            )
        elif path == b"/latin":
            body = "échec".encode("latin-1")
            head = b"HTTP/1.1 400 Bad\r\nConnection: close\r\nContent-Type: text/plain; charset=latin-1\r\n"
            reply = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
        else:
            head = b"HTTP/1.1 200 OK\r\nConnection: close\r\nSet-Cookie: sid=abc; Path=/\r\n"
            reply = head + b'Content-Length: 11\r\n\r\n{"ok": 123}'
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    from ragdive.httpx_client import async_client

    client = TargetClient(timeout_s=5) if kind == "own" else async_client(timeout=5)
    try:
        assert await request_json(client, "POST", f"{base}/ok", body={"q": "é"}, max_retries=0) == {"ok": 123}
        assert await request_json(client, "GET", f"{base}/ok", body={"q": "a b"}, max_retries=0) == {"ok": 123}
        assert b"cookie: sid=abc" in seen[-1].lower() and b"GET /ok?q=a" in seen[-1]
        with pytest.raises(TargetError, match="not JSON"):
            await request_json(client, "POST", f"{base}/moved", body={}, max_retries=0)
        assert seen[-1].startswith(b"POST /moved")  # not followed
        with pytest.raises(TargetError, match="HTTP 400: échec") as info:
            await request_json(client, "POST", f"{base}/latin", body={}, max_retries=0)
        assert info.value.status == 400 and info.value.body == "échec"
    finally:
        server.close()
        await server.wait_closed()
    with pytest.raises(TargetError, match="ConnectError"):
        await request_json(client, "POST", f"{base}/ok", body={}, max_retries=0)
    await client.aclose()
