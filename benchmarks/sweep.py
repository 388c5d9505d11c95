"""How close a sweep gets to the time its model calls must take: sweep wall time ÷ the sum of its runs'
critical-path bounds, against the loopback stub server with a fixed latency per call, measured in one run.

    python benchmarks/sweep.py [--latencies-ms 20,100] [--cells 2] [--repeats 2] [--conversations 4] [--turns 3]
    python benchmarks/sweep.py --executor ray [--address ADDR]
    python benchmarks/sweep.py --executor ray --shards 2 [--conversations 40]

With ``--executor ray`` each line runs the same sweep twice, with the local executor and with the Ray executor (a
local instance, ``ray.init(num_cpus=2)``, started once before the first line and not counted), and prints the
ratio of their wall times: what shipping runs to Ray workers and mirroring their records back costs here. With
``--shards N`` it compares one run (``--conversations``, simulated and scored) made locally with the same run
split into N parts on Ray workers (``ragdive run --executor ray --shards N``), with the same limits in total.

Every role (user, validator, the reference RAG's generator, judge) is an `openai/...` model on the stub server,
which answers as ragdive's offline doubles would, after the fixed latency. A run's critical-path bound is the
least time its calls can take at that latency with its real limits. The simulation: conversations run
``simulation.concurrency`` at a time, each turn's calls (user draft, validator, generator) one after another.
The judge runs beside it (each turn is judged as soon as it is answered), ``J = min(evaluation.concurrency, the
judge model's max_concurrency)`` calls at a time, and at least one judge round is left once the last answer is in:

    simulation = ceil(conversations / sim_concurrency) × turns × (calls per turn) × L
    bound = max(simulation + L, ceil(judge calls / J) × L)

(The bound until issue 27 added the judging after the simulation, with 8 judge slots: judging overlaps the
simulation and a model allows 64 calls in flight, so the wall "beat" it.)

A ratio near 1 with runs one at a time means the sweep adds little of its own; below 1 with several runs at once
means runs overlap (they share one limiter per endpoint, so not by more than the endpoint allows).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.config.models import ModelSpec  # noqa: E402
from ragdive.config.sweep import SweepConfig  # noqa: E402
from ragdive.models import Message  # noqa: E402
from ragdive.pipeline.sweep import open_sweep, run_sweep  # noqa: E402
from ragdive.pipeline.sweep_plan import plan_sweep  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from ragdive.targets.reference.doubles import first_passage  # noqa: E402
from ragdive.testing import offline  # noqa: E402
from ragdive.testing.stub_server import StubServer  # noqa: E402
from tests.simulation.helpers import DOCS  # noqa: E402


def reply(body: dict[str, Any]) -> str:
    """The offline doubles, chosen by the model name each role is bound to."""
    messages = [Message(role=m["role"], content=str(m.get("content") or "")) for m in body["messages"]]
    role = body["model"]
    if role == "user":
        return json.dumps(offline.user(messages))
    if role == "validator":
        return json.dumps(offline.validator(messages))
    if role == "judge":
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
        return json.dumps(offline.judge(messages, type(name, (), {})))  # type: ignore[arg-type]
    return first_passage(messages)


def sweep_config(root: Path, base_url: str, args: argparse.Namespace) -> SweepConfig:
    corpus = root / "corpus"
    corpus.mkdir()
    for doc in DOCS:
        (corpus / f"{doc.id}.md").write_text(doc.text + "\n")
    models = {
        role: {"model": f"openai/{role}", "base_url": base_url, "api_key": "x"}
        for role in ("user", "validator", "target", "judge")
    }
    base = {
        "name": "bench",
        "seed": 1,
        "models": models,
        "corpus": {"path": str(corpus)},
        "simulation": {"conversations": args.conversations, "max_turns": args.turns, "concurrency": 4},
        "target": {
            "type": "reference",
            "retriever": "bm25",
            "top_k": 2,
            "chunk_size": 24,
            "chunk_overlap": 4,
            "index_dir": str(root / "index"),
        },
        "evaluation": {"concurrency": 4},
    }
    histories = ["full", "none", "first", "last:3"][: args.cells]
    return SweepConfig.model_validate(
        {"base": base, "axes": {"target.history": histories}, "repeats": args.repeats, "concurrency": 1}
    )


def run_bound(store: RunStore, latency: float) -> float:
    manifest = store.read_manifest()
    config = manifest.config
    calls = {s.role: s.calls for s in manifest.totals.spend}
    conversations = store.current_conversations()
    turns = max(len(c.turns) for c in conversations)
    per_turn = (calls.get("user", 0) + calls.get("validator", 0) + calls.get("target", 0)) / max(
        1, sum(len(c.turns) for c in conversations)
    )
    waves = math.ceil(len(conversations) / config["simulation"]["concurrency"])
    judge_model = ModelSpec.model_validate(config["models"]["judge"])
    judge_slots = min(config["evaluation"]["concurrency"], judge_model.max_concurrency)
    simulation = waves * turns * per_turn * latency
    return max(simulation + latency, math.ceil(calls.get("judge", 0) / judge_slots) * latency)


async def measure(
    latency: float, runs_at_once: int, args: argparse.Namespace, executor: Any = None
) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp, StubServer(reply=reply, latency_s=latency) as server:
        root = Path(tmp)
        sweep = sweep_config(root, server.base_url, args).model_copy(update={"concurrency": runs_at_once})
        plan = plan_sweep(sweep)
        store = open_sweep(plan, root / "sweep", resume=False)
        began = time.perf_counter()
        if executor is not None:
            executor.concurrency = runs_at_once
        outcome = await run_sweep(plan, store, no_cache=True, executor=executor)
        wall = time.perf_counter() - began
        assert outcome.status == "finished", outcome.errors
        bounds = sum(run_bound(RunStore.open(store.run_path(r.run_id)), latency) for r in plan.runs)
        return wall, bounds, len(plan.runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies-ms", default="20,100")
    parser.add_argument("--cells", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--address", default=None, help="with --executor ray: a cluster (default: a local one)")
    parser.add_argument("--shards", type=int, default=0, help="with --executor ray: one run split in N parts")
    args = parser.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if args.executor == "ray" and args.shards:
        compare_shards(args)
        return
    if args.executor == "ray":
        compare_ray(args)
        return
    print(f"{args.cells} cells × {args.repeats} repeats, {args.conversations} conversations × {args.turns} turns")
    asyncio.run(measure(0.0, 1, argparse.Namespace(**{**vars(args), "cells": 1, "repeats": 1})))  # warm: imports
    print(f"{'latency':>8} {'runs at once':>12} {'runs':>5} {'wall s':>8} {'Σ bounds s':>11} {'wall/Σ bounds':>14}")
    for ms in (float(x) for x in args.latencies_ms.split(",")):
        for at_once in (1, 4):
            wall, bounds, runs = asyncio.run(measure(ms / 1000, at_once, args))
            print(f"{ms:>6g}ms {at_once:>12} {runs:>5} {wall:>8.2f} {bounds:>11.2f} {wall / bounds:>14.2f}")
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def compare_ray(args: argparse.Namespace) -> None:
    from ragdive.executors.ray import RayExecutor

    print(f"{args.cells} cells × {args.repeats} repeats, {args.conversations} conversations × {args.turns} turns")
    ray = RayExecutor(1, address=args.address)
    began = time.perf_counter()
    ray.start()
    print(f"ray start: {time.perf_counter() - began:.1f} s (not counted below)")
    try:
        began = time.perf_counter()  # the first run also starts the worker process and its imports
        asyncio.run(measure(0.0, 1, argparse.Namespace(**{**vars(args), "cells": 1, "repeats": 1}), ray))
        print(f"first Ray run (starts the worker): {time.perf_counter() - began:.1f} s (not counted below)")
        head = f"{'latency':>8} {'runs at once':>12} {'runs':>5} {'local s':>8} {'ray s':>8} {'ray/local':>10}"
        print(head + f" {'per-run overhead s':>19}")
        for ms in (float(x) for x in args.latencies_ms.split(",")):
            for at_once in (1, 2):
                local, _, runs = asyncio.run(measure(ms / 1000, at_once, args))
                distributed, _, _ = asyncio.run(measure(ms / 1000, at_once, args, ray))
                # one run after another (runs at once 1): what Ray adds to each run (order, drains, the mirror)
                overhead = f"{(distributed - local) / runs:>19.3f}" if at_once == 1 else f"{'-':>19}"
                print(
                    f"{ms:>6g}ms {at_once:>12} {runs:>5} {local:>8.2f} {distributed:>8.2f} {distributed / local:>10.2f}"
                    f" {overhead}"
                )
    finally:
        ray.close()


async def measure_run(latency: float, args: argparse.Namespace, ray: Any = None) -> float:
    """Wall time of one run (simulation and scoring) at ``latency``: here, or in ``args.shards`` parts on Ray."""
    from contextlib import AsyncExitStack

    from ragdive.config import ExperimentConfig
    from ragdive.executors.ray_shards import run_sharded
    from ragdive.pipeline import RunOptions, prepare_experiment, run_experiment

    with tempfile.TemporaryDirectory() as tmp, StubServer(reply=reply, latency_s=latency) as server:
        root = Path(tmp)
        base = sweep_config(root, server.base_url, args).base
        assert isinstance(base, dict)
        base["simulation"]["concurrency"] = base["evaluation"]["concurrency"] = 16
        config = ExperimentConfig.model_validate(base)
        async with AsyncExitStack() as resources:
            prepared = await prepare_experiment(config, resources, RunOptions(output=root / "runs", no_cache=True))
            began = time.perf_counter()
            if ray is None:
                outcome = await run_experiment(prepared)
            else:
                outcome = await run_sharded(config, prepared, ray, args.shards, no_cache=True)
            wall = time.perf_counter() - began
        assert outcome.status == "finished", outcome.error
        return wall


def compare_shards(args: argparse.Namespace) -> None:
    from ragdive.executors.ray import RayExecutor, cluster_cpus

    print(f"one run of {args.conversations} conversations × {args.turns} turns, here and in {args.shards} parts")
    ray = RayExecutor(address=args.address)
    began = time.perf_counter()
    ray.start()
    ray.concurrency = min(args.shards, cluster_cpus())
    print(f"ray start: {time.perf_counter() - began:.1f} s (not counted below)")
    try:
        began = time.perf_counter()  # the first parts also start the worker processes and their imports
        asyncio.run(measure_run(0.0, argparse.Namespace(**{**vars(args), "conversations": 2}), ray))
        print(f"first split run (starts the workers): {time.perf_counter() - began:.1f} s (not counted below)")
        print(f"{'latency':>8} {'parts':>6} {'local s':>8} {'ray s':>8} {'ray/local':>10}")
        for ms in (float(x) for x in args.latencies_ms.split(",")):
            local = asyncio.run(measure_run(ms / 1000, args))
            distributed = asyncio.run(measure_run(ms / 1000, args, ray))
            print(f"{ms:>6g}ms {args.shards:>6} {local:>8.2f} {distributed:>8.2f} {distributed / local:>10.2f}")
    finally:
        ray.close()


if __name__ == "__main__":
    main()
