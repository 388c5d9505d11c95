"""CPU of the judging window alone (evaluation.window.bounded) per job, this checkout against another side by side.

    python benchmarks/window_cpu.py --before SRC [--jobs 30000] [--rounds 5]

Each job awaits one loop turn (as a judge call awaits its reply) and returns; the source has every job at hand, or
waits a loop turn before every 10th (a simulation still delivering). Both windows are loaded into one process from
their files and run alternately on the loop ragdive's commands use (uvloop's where installed), at the window a
default run has (4 x 64) and at 64. Prints each side's median process CPU per job, the ratio and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

WINDOW = Path("ragdive/evaluation/window.py")


def load(src: Path, name: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location(name, src / WINDOW)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.bounded  # type: ignore[no-any-return]


async def job() -> int:
    await asyncio.sleep(0)
    return 1


async def source(jobs: int, wait_every: int) -> AsyncIterator[Callable[[], Any]]:
    for i in range(jobs):
        if wait_every and i % wait_every == 0:
            await asyncio.sleep(0)
        yield job


async def per_job(window: Callable[..., Any], jobs: int, limit: int, wait_every: int) -> float:
    started = time.process_time()
    total = 0
    async for result in window(source(jobs, wait_every), limit):
        total += result
    assert total == jobs
    return (time.process_time() - started) / jobs * 1e6


async def measure(sides: dict[str, Callable[..., Any]], jobs: int, rounds: int) -> None:
    for limit, wait_every in ((256, 0), (256, 10), (64, 0)):
        times: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(rounds):
            for name, window in sides.items():
                times[name].append(await per_job(window, jobs, limit, wait_every))
        medians = {name: statistics.median(values) for name, values in times.items()}
        waits = f"waits before every {wait_every}th" if wait_every else "has every job at hand"
        line = ", ".join(f"{name} {m:.2f} us" for name, m in medians.items())
        ratio = f" (this / before {medians['this'] / medians['before']:.2f})" if "before" in medians else ""
        print(f"limit {limit}, source {waits}: CPU per job {line}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src/: measured side by side")
    parser.add_argument("--jobs", type=int, default=30000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1] / "src"
    sides = {"this": load(here, "window_this")}
    if args.before:
        sides["before"] = load(args.before.resolve(), "window_before")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    from ragdive.sync_edge import run_loop

    run_loop(measure(sides, args.jobs, args.rounds))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
