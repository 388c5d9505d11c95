"""CPU of a run's clustered bootstrap CIs, this checkout against another side by side, and whether they are equal.

    python benchmarks/summary_cis.py --before SRC [--conversations 1000] [--turns 5] [--rounds 3]

Builds report_size.py's realistic run (6 per-turn metrics, 2 per conversation), then per round, in a fresh process
for each side (alternately): the process CPU of summarize_run, summarize_by(turn) and metric_curves, the CIs a run's
summary, `analyze` and `report` ask for. Prints each side's median, the ratio, the load average, and whether the
two sides' intervals are the same bits (they must be: only the way they are computed may change).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_size import realistic_run  # noqa: E402

MEASURE = """
import hashlib, sys, time
from ragdive.analysis import RunScores, summarize_by, summarize_run
from ragdive.analysis.conversations import metric_curves
from ragdive.store import RunStore
run = RunScores.from_store(RunStore(sys.argv[1]))
started = time.process_time()
cis = [s.ci for s in summarize_run(run)]
cis += [s.ci for groups in summarize_by(run, "turn").values() for s in groups.values()]
cis += [p.ci for points in metric_curves(run.scores).values() for p in points]
print(time.process_time() - started, len(cis), hashlib.sha256(repr(cis).encode()).hexdigest())
"""


def measure(src: Path, run: Path) -> tuple[float, int, str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", MEASURE, str(run)], env=env, check=True, capture_output=True, text=True)
    cpu, count, digest = out.stdout.split()
    return float(cpu), int(count), digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout's src/")
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sides = {"this": Path(__file__).resolve().parents[1] / "src", "before": args.before.resolve()}
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        run = realistic_run(Path(tmp), args.conversations, args.turns).path
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        results = {}
        for _ in range(args.rounds):
            for side, src in sides.items():
                seconds, count, digest = measure(src, run)
                cpu[side].append(seconds)
                results[side] = (count, digest)
    for side, times in cpu.items():
        print(f"{side}: median CPU {statistics.median(times):.3f} s ({', '.join(f'{t:.3f}' for t in times)})")
    print(f"this / before: {statistics.median(cpu['this']) / statistics.median(cpu['before']):.2f}")
    print(f"{results['this'][0]} intervals, the same bits on both sides: {results['this'] == results['before']}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
