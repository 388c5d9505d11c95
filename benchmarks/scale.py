"""How a run grows: wall time, peak memory and span ÷ latency bound from 50 to thousands of conversations, every
call made (a document per conversation, the stub's target numbering its answers), each size in a fresh
`ragdive run` process (its peak RSS read from the kernel when it exits).

    python benchmarks/scale.py                                   # 50, 400 and 2,000 conversations x 5, L = 0.1 s
    python benchmarks/scale.py --sizes 50,400,2000,10000         # the issue's table (10,000 x 5: see below)

Printed per size: requests sent, wall, the critical-path bound (the longest conversation's chain of calls plus one
judge round, times L; the busiest limit's requests x L / that limit: conversations at once, the judge's calls in
flight; or requests x L / peak in flight) and wall / bound, the process's peak RSS, its CPU
milliseconds per request, and the stub's (its own process: when either is near a core's worth of the wall, the
two cores are the limit, not the latency). Note the load average. The stub only counts the requests (it keeps
none), so its own memory stays flat at every size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from throughput import chain_calls, experiment, synthetic_corpus

from ragdive.config import ExperimentConfig
from ragdive.store import RunStore
from ragdive.testing import StubProcess


def run_once(latency: float, conversations: int, turns: int) -> str:
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubProcess(latency_s=latency, reply="ragdive.testing.role_replies:unique_roles") as stub,
    ):
        root = Path(tmp)
        corpus = synthetic_corpus(root / "corpus", documents=max(30, conversations))
        config = experiment(stub.base_url, corpus, root, conversations, turns, None)
        path = root / "experiment.yaml"
        path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)))
        started = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-m", "ragdive", "run", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise RuntimeError(f"ragdive run exited {child.returncode}")
        store = RunStore.open(Path(out.strip().splitlines()[-1]))
        requests, peak = stub.request_count, stub.peak_in_flight
        stub_cpu = process_cpu(stub.pid)
        longest = max(chain_calls(c) for c in store.current_conversations())
        bound = max((longest + 1) * latency, requests * latency / max(1, peak), limits_bound(store, config, latency))
        cpu = usage.ru_utime + usage.ru_stime
        return (
            f"{conversations:>7,} x {turns} {requests:>9,} {wall:>8.1f} {bound:>8.1f} {wall / bound:>11.2f} "
            f"{usage.ru_maxrss / 1024:>9.0f} {1000 * cpu / max(1, requests):>11.2f} "
            f"{1000 * stub_cpu / max(1, requests):>12.2f}"
        )


def limits_bound(store: RunStore, config: ExperimentConfig, latency: float) -> float:
    """What the configured limits allow at best: each conversation has one call in flight (user, validator or
    target: simulation.concurrency at once), the judge at most min(its model's max_concurrency,
    evaluation.concurrency); the busier of the two, its requests x L / its limit."""
    totals = store.read_manifest().totals
    judge = sum(line.calls for line in totals.spend if line.role == "judge")
    simulating = sum(line.calls for line in totals.spend if line.role != "judge") + totals.turns  # + the target's
    judge_spec = config.models.for_role("judge")
    assert judge_spec is not None
    judge_limit = min(judge_spec.max_concurrency, config.evaluation.concurrency)
    return max(judge * latency / judge_limit, simulating * latency / config.simulation.concurrency)


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,400,2000", help="conversation counts, comma-separated")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f} ({} cores)".format(*os.getloadavg(), os.cpu_count()))
    print(f"L = {args.latency:g} s")
    heads = (("size", 11), ("requests", 9), ("wall s", 8), ("bound s", 8), ("wall/bound", 11), ("peak MiB", 9))
    print(" ".join(f"{h:>{w}}" for h, w in heads) + f" {'CPU ms/req':>11} {'stub ms/req':>12}")
    for size in (int(s) for s in args.sizes.split(",")):
        print(run_once(args.latency, size, args.turns), flush=True)
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
