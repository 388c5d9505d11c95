"""Client CPU per chat-completion call, by HTTP client, against the project's stub server in its own process.

The same POST (a 2 KB message, the stub's answer parsed as JSON) through:
- the official `openai` SDK's ``post`` on ragdive's httpx-on-aiohttp transport, its reply parsed into a typed
  ChatCompletion (what the openai backend did before it posted on aiohttp itself);
- the same SDK ``post`` with the reply kept raw (``cast_to=httpx.Response``) and parsed with ``json.loads``;
- httpx's interface on aiohttp's transport (``ragdive.httpx_client.async_client``: a client a user may hand the
  targets; their own default sends on aiohttp directly, as JsonSession does);
- ``ragdive.http_client.JsonSession`` (aiohttp directly: the openai backend's client).

CPU is this process's (``time.process_time``), so the server's share of the 2 cores is not counted; the rounds
are interleaved because the load on a shared machine drifts.

    python benchmarks/http_clients.py
    python benchmarks/http_clients.py --calls 5000 --concurrency 128 --latency 0.1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion

from ragdive.http_client import JsonSession
from ragdive.httpx_client import async_client
from ragdive.testing import StubProcess

KINDS = ("openai SDK, typed reply", "openai SDK, raw reply", "httpx on aiohttp", "JsonSession (aiohttp)")


def body(i: int) -> dict[str, Any]:
    return {"model": "stub-bench", "messages": [{"role": "user", "content": f"question {i} " + "x" * 2000}]}


async def one_kind(kind: str, base_url: str, calls: int, concurrency: int) -> tuple[float, float]:
    """(client CPU ms per call, wall s) for ``calls`` calls with ``concurrency`` in flight."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    one: Callable[[int], Awaitable[Any]]
    close: Callable[[], Awaitable[None]]
    if kind.startswith("openai SDK"):
        sdk = openai.AsyncOpenAI(
            api_key="no-key", base_url=base_url, max_retries=0, http_client=async_client(limits=limits)
        )
        typed = kind.endswith("typed reply")

        async def one(i: int) -> Any:
            if typed:
                return await sdk.post("/chat/completions", body=body(i), cast_to=ChatCompletion)
            reply = await sdk.post("/chat/completions", body=body(i), cast_to=httpx.Response)
            return json.loads(reply.content)

        close = sdk.close
    elif kind == "httpx on aiohttp":
        client = async_client(limits=limits)

        async def one(i: int) -> Any:
            reply = await client.post(f"{base_url}/chat/completions", json=body(i))
            return json.loads(reply.content)

        close = client.aclose
    else:
        session = JsonSession(connections=concurrency)

        async def one(i: int) -> Any:
            return json.loads((await session.post(f"{base_url}/chat/completions", body(i))).body)

        close = session.aclose
    queue = iter(range(calls))

    async def worker() -> None:
        for i in queue:
            await one(i)

    cpu, wall = time.process_time(), time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return (time.process_time() - cpu) / calls * 1000, time.perf_counter() - wall
    finally:
        await close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05, help="the stub's fixed latency, seconds")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    best: dict[str, tuple[float, float]] = {}
    with StubProcess(latency_s=args.latency) as stub:
        for _ in range(args.rounds):
            for kind in KINDS:
                cpu, wall = asyncio.run(one_kind(kind, stub.base_url, args.calls, args.concurrency))
                if kind not in best or cpu < best[kind][0]:
                    best[kind] = (cpu, wall)
    print(
        f"\n{args.calls} calls, {args.concurrency} in flight, L = {args.latency:g} s, best of {args.rounds} "
        "interleaved rounds"
    )
    print(f"  {'client':<28} {'CPU ms/call':>11} {'wall s':>8} {'CPU vs JsonSession':>19}")
    base = best[KINDS[-1]][0]
    for kind in KINDS:
        cpu, wall = best[kind]
        print(f"  {kind:<28} {cpu:11.3f} {wall:8.2f} {cpu / base:18.2f}x")


if __name__ == "__main__":
    main()
