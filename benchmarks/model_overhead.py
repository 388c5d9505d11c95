"""Calls per second through the `Model` wrapper: its own overhead, with the cache off.

"Zero-latency local stub" here means an in-process backend that answers at once, so the figure is the wrapper's
own cost (budget check, limiter slot, timeout, usage accounting, structured parsing) — the goal is at least
1,000 calls/s. For context it also prints the same through the real openai backend over HTTP to the project's
stub server running in its own process on loopback (client and server share the 2 cores, so that figure is
dominated by the SDK, HTTP and the server, not the wrapper).

    python benchmarks/model_overhead.py            # in-process and HTTP
    python benchmarks/model_overhead.py --no-http  # in-process only
"""

from __future__ import annotations

import argparse
import asyncio
import time

from pydantic import BaseModel

from ragdive.config.models import ModelSpec
from ragdive.models import Completion, GenerateParams, Message, Model, ModelBackend, get_model
from ragdive.records import Usage
from ragdive.testing import StubProcess

MESSAGES = [
    Message(role="system", content="You are a careful judge."),
    Message(role="user", content="Is the answer faithful to the context? Context: ... Answer: ..."),
]
CONCURRENCY = (1, 16, 64)


class Verdict(BaseModel):
    faithful: bool
    reason: str


class ZeroLatency(ModelBackend):
    """Answers immediately with a fixed completion: nothing but the wrapper is measured."""

    provider = "bench"

    async def generate(
        self, messages: list[Message], *, schema: type[BaseModel] | None = None, params: GenerateParams | None = None
    ) -> Completion:
        text = '{"faithful": true, "reason": "supported"}' if schema else "ok"
        return Completion(text=text, model=self.name, usage=Usage(prompt_tokens=20, completion_tokens=8))


async def run(call, total: int, concurrency: int) -> float:  # type: ignore[no-untyped-def]
    per_worker = total // concurrency

    async def worker() -> None:
        for _ in range(per_worker):
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return per_worker * concurrency / (time.perf_counter() - start)


async def in_process(total: int) -> list[tuple[str, int, float]]:
    backend = ZeroLatency("bench/zero")
    model = Model(backend, role="judge", spec=ModelSpec(model="bench/zero", max_concurrency=64))
    rows = []
    for concurrency in CONCURRENCY:
        rows.append(
            ("backend alone (baseline)", concurrency, await run(lambda: backend.generate(MESSAGES), total, concurrency))
        )
        rows.append(("wrapper, text", concurrency, await run(lambda: model.generate(MESSAGES), total, concurrency)))
        rows.append(
            (
                "wrapper, structured",
                concurrency,
                await run(lambda: model.generate(MESSAGES, schema=Verdict), total, concurrency),
            )
        )
    return rows


async def over_http(server: StubProcess, total: int) -> list[tuple[str, int, float]]:
    spec = ModelSpec(model="openai/stub-model", base_url=server.base_url, max_concurrency=64, max_retries=0)
    model = get_model(spec, role="judge")
    rows = []
    try:
        for concurrency in CONCURRENCY:
            rows.append(
                (
                    "openai backend over HTTP",
                    concurrency,
                    await run(lambda: model.generate(MESSAGES), total, concurrency),
                )
            )
    finally:
        await model.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000, help="calls per in-process measurement")
    parser.add_argument("--http-calls", type=int, default=640, help="calls per HTTP measurement")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP figures")
    args = parser.parse_args()

    rows = asyncio.run(in_process(args.calls))
    if not args.no_http:
        with StubProcess() as server:
            rows += asyncio.run(over_http(server, args.http_calls))
    print(f"{'path':<28} {'concurrency':>11} {'calls/s':>10}")
    for name, concurrency, rate in rows:
        print(f"{name:<28} {concurrency:>11} {rate:>10,.0f}")
    wrapper = [rate for name, _, rate in rows if name.startswith("wrapper")]
    print(f"\nslowest wrapper figure: {min(wrapper):,.0f} calls/s (goal: >= 1,000; cache off)")


if __name__ == "__main__":
    main()
