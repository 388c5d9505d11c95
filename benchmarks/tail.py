"""The time a user waits past the last model call: `ragdive run` as a user starts it (its own process, the CLI),
against the stub in another process, timed on the machine's monotonic clock that both share.

    python benchmarks/tail.py                          # 200 x 5 at L = 0.1 s, and 20 x 5 at L = 1 s
    python benchmarks/tail.py --runs 0.1:50x3          # smaller

Per run: start-up (the process starting to its first request), the tail (the last answer sent to the process
exiting: the summary, report.html, the last manifest), the whole wall, and the critical-path bound (the longest
conversation's chain of calls x L plus one judge round, or requests x L / peak in flight) with wall / bound as the
user waits. Then the same command again on the same cache: a re-run the cache answers (what it sends is printed;
the stub's target answers the same text every time for this one, so every model call can be a hit).
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
from throughput import chain_calls, experiment, parse_run, synthetic_corpus

from ragdive.store import RunStore
from ragdive.testing import StubProcess


def run_cli(config_path: Path) -> tuple[float, float, Path]:
    """(started, exited) on the monotonic clock, and the run directory (the last line of stdout)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", "run", str(config_path)], capture_output=True, text=True, check=False
    )
    exited = time.monotonic()
    if done.returncode != 0:
        raise RuntimeError(f"ragdive run exited {done.returncode}: {done.stderr[-2000:]}")
    return started, exited, Path(done.stdout.strip().splitlines()[-1])


def measure(latency: float, conversations: int, turns: int, reply: str, rerun: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp, StubProcess(latency_s=latency, reply=reply) as stub:
        root = Path(tmp)
        corpus = synthetic_corpus(root / "corpus", documents=max(30, conversations))
        config = experiment(stub.base_url, corpus, root, conversations, turns, None)
        config_path = root / "experiment.yaml"
        config_path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)))
        label = f"L = {latency:g} s, {conversations} x {turns}"
        for attempt in ("first run", "re-run on the same cache") if rerun else ("first run",):
            stub.reset()
            started, exited, run_dir = run_cli(config_path)
            requests = stub.requests
            wall = exited - started
            if not requests:
                print(f"{label}, {attempt}: 0 requests sent, wall {wall:.2f} s")
                continue
            first = min(r.at for r in requests)
            last_answer = max(r.at for r in requests) + latency
            store = RunStore.open(run_dir)
            longest = max(chain_calls(c) for c in store.current_conversations())
            bound = max((longest + 1) * latency, len(requests) * latency / max(1, stub.peak_in_flight))
            print(
                f"{label}, {attempt}: {len(requests):,} requests sent; wall {wall:.2f} s = start-up "
                f"{first - started:.2f} s + calls {last_answer - first:.2f} s + tail {exited - last_answer:.2f} s; "
                f"critical-path bound {bound:.2f} s, wall / bound {wall / bound:.2f}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", action="append", help="LATENCY:CxT, repeatable (default: 0.1:200x5 1:20x5)")
    parser.add_argument("--no-rerun", action="store_true", help="skip the cached re-run")
    args = parser.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f} ({} cores)".format(*os.getloadavg(), os.cpu_count()))
    for run in args.runs or ["0.1:200x5", "1:20x5"]:
        measure(*parse_run(run), "ragdive.testing.role_replies:unique_roles", rerun=False)
        if not args.no_rerun:
            measure(*parse_run(run), "ragdive.testing.role_replies:ragdive_roles", rerun=True)
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
