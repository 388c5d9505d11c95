"""Event-loop work per request: loop turns and callbacks run, ragdive's run against bare aiohttp on the same requests.

The throughput run (benchmarks/throughput.py: simulate + evaluate against the stub, every call really made) and the
bare-aiohttp replay of its requests, each counted: the loop's turns (one ``select`` each; those that did not wait
for I/O apart, since the turn before left callbacks ready) and the callbacks it ran, by kind (a task's step, named
by its coroutine, or the callback's own name). Every hop from one future or task to the next is a callback and
often a turn of its own (``epoll_wait`` and the loop's bookkeeping, ~2 us each here): a count the profilers do not
show as such, since the cost is spread over asyncio's own frames.

    python benchmarks/loop_hops.py                     # 0.1:200x5, as throughput.py's CPU per request
    python benchmarks/loop_hops.py --runs 0.01:20x3 --kinds 8
"""

from __future__ import annotations

import argparse
import asyncio
import os
import selectors
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import throughput

from ragdive.testing import StubProcess


class Counts:
    """Loop turns and callbacks while ``on``; patched into asyncio's Handle and the epoll selector."""

    def __init__(self) -> None:
        self.on = False
        self.turns = 0
        self.busy_turns = 0
        self.callbacks: Counter[str] = Counter()

    def install(self) -> None:
        run: Callable[[asyncio.Handle], Any] = asyncio.Handle._run  # type: ignore[attr-defined]
        select = selectors.EpollSelector.select
        counts = self

        def counted_run(handle: asyncio.Handle) -> Any:
            if counts.on:
                counts.callbacks[kind(handle._callback)] += 1  # type: ignore[attr-defined]
            return run(handle)

        def counted_select(selector: selectors.EpollSelector, timeout: float | None = None) -> Any:
            if counts.on:
                counts.turns += 1
                counts.busy_turns += timeout == 0
            return select(selector, timeout)

        asyncio.Handle._run = counted_run  # type: ignore[attr-defined]
        selectors.EpollSelector.select = counted_select  # type: ignore[method-assign]

    def reset(self) -> None:
        self.turns = self.busy_turns = 0
        self.callbacks.clear()


def kind(callback: Any) -> str:
    """What a callback is, without its repr (a future's repr formats its result: an aiohttp response's repr reads
    its headers, and changed the run)."""
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return f"task step: {getattr(coro, '__qualname__', type(coro).__name__)}"
    name = type(callback).__name__
    if name in ("TaskStepMethWrapper", "TaskWakeupMethWrapper"):
        return f"task step ({name}: a new task's first step, or a C task woken)"
    return str(getattr(callback, "__qualname__", name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="0.1:200x5", help="LATENCY:CxT (default 0.1:200x5)")
    parser.add_argument("--kinds", type=int, default=14, help="callback kinds shown per side")
    args = parser.parse_args()
    latency, conversations, turns = throughput.parse_run(args.runs)
    counts = Counts()
    counts.install()
    print(f"load average at start: {throughput.load()} ({os.cpu_count()} cores)")
    with (
        StubProcess(latency_s=latency, reply="ragdive.testing.role_replies:unique_roles", keep_requests=True) as stub,
        tempfile.TemporaryDirectory() as tmp,
    ):
        corpus = throughput.synthetic_corpus(Path(tmp) / "corpus", documents=max(30, conversations))
        config = throughput.experiment(stub.base_url, corpus, Path(tmp) / "run", conversations, turns, None)
        run_experiment = throughput.run_experiment

        async def counted(*a: Any, **k: Any) -> Any:  # the window throughput.py takes the CPU of
            counts.on = True
            try:
                return await run_experiment(*a, **k)
            finally:
                counts.on = False

        throughput.run_experiment = counted  # type: ignore[assignment]
        big = asyncio.run(throughput.ragdive_run(stub, config))
        ours = (counts.turns, counts.busy_turns, sum(counts.callbacks.values()), counts.callbacks.copy())
        counts.reset()
        counts.on = True
        asyncio.run(throughput.aiohttp_replay(stub.base_url, big.bodies, big.peak))
        counts.on = False
        bare = (counts.turns, counts.busy_turns, sum(counts.callbacks.values()), counts.callbacks.copy())
    requests = max(1, big.requests)
    print(f"\nL = {latency:g} s, {conversations} x {turns}: {big.requests:,} requests, peak {big.peak} in flight")
    for name, (all_turns, busy, callbacks, _) in (("ragdive", ours), ("bare aiohttp", bare)):
        print(
            f"  {name:<13} loop turns {all_turns:7,} ({all_turns / requests:5.2f} a request; {busy:,} without waiting)"
            f"   callbacks {callbacks:7,} ({callbacks / requests:5.2f} a request)"
        )
    print(f"  ragdive / bare: turns {ours[0] / max(1, bare[0]):.2f}, callbacks {ours[2] / max(1, bare[2]):.2f}")
    for name, (*_, by_kind) in (("ragdive", ours), ("bare aiohttp", bare)):
        print(f"\n  {name}: callbacks by kind")
        for what, n in by_kind.most_common(args.kinds):
            print(f"    {n:7,}  {what}")
    print(f"\nload average at end: {throughput.load()}")


if __name__ == "__main__":
    sys.exit(main())
