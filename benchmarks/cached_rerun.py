"""A fully cached re-run (issue 27 item 3), side by side with another checkout: `ragdive run` as a user starts it
(its own process, the CLI), every model call a cache hit and the stub's target answering at once, so what is timed
is ragdive's own part: start-up, the cache hits and the target's calls, the end of the run.

    python benchmarks/cached_rerun.py --before OTHER_CHECKOUT/src                 # 200 x 5, 5 interleaved rounds
    python benchmarks/cached_rerun.py --before OTHER_CHECKOUT/src --size 20x5 --rounds 10

Each side first fills its own cache (untimed, the stub at L = 0, its modules compiled as installed), then the
sides' re-runs alternate, round after round (the machine's load drifts). Per re-run: the process's CPU time
(getrusage of the child: user + system, the figure least moved by other people's work on the machine), wall,
start-up (the process starting to its first request, on the monotonic clock the stub shares) and the time after
the last request (the target's last call to the exit: the judge's last cache hits, the summary, report.html).
Prints each round, then the medians, the ratio this / before and in how many rounds this side's CPU was lower.
`tail.py` gives the same re-run's wall among its other figures. The user's cache folder (XDG_CACHE_HOME) is the
shell's: a side that keeps compiled templates there has them from its untimed runs, as a user's second run has.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from tail import cli_env
from throughput import experiment, synthetic_corpus

from ragdive.testing import StubProcess

FIGURES = ("cpu", "wall", "start-up", "after the last request")


def timed_run(config_path: Path, src: Path | None, bytecode: Path) -> tuple[float, float, float]:
    """(started, exited) on the monotonic clock and the child's CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", "run", str(config_path)],
        capture_output=True,
        text=True,
        check=False,
        env=cli_env(src, bytecode),
    )
    exited = time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"ragdive run exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return started, exited, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src/: measured side by side")
    parser.add_argument("--size", default="200x5", help="CONVERSATIONSxTURNS (default 200x5)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    conversations, turns = (int(n) for n in args.size.split("x"))
    sides: dict[str, Path | None] = {"this": None, **({"before": args.before.resolve()} if args.before else {})}
    print("load average at start: {:.2f} {:.2f} {:.2f} ({} cores)".format(*os.getloadavg(), os.cpu_count()))
    figures: dict[str, list[tuple[float, ...]]] = {side: [] for side in sides}
    replies = "ragdive.testing.role_replies:ragdive_roles"  # the target answers the same text: every call a hit
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubProcess(latency_s=0.0, reply=replies, keep_requests=True) as stub,
    ):
        root = Path(tmp)
        bytecode = root / "bytecode"
        corpus = synthetic_corpus(root / "corpus", documents=max(30, conversations))
        configs: dict[str, Path] = {}
        for side, src in sides.items():  # untimed: the cache filled, modules compiled, files in the page cache
            config = experiment(stub.base_url, corpus, root / side, conversations, turns, None)
            configs[side] = root / f"{side}.yaml"
            configs[side].write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)))
            timed_run(configs[side], src, bytecode)
            stub.reset()
            timed_run(configs[side], src, bytecode)
            print(f"{side}: cache filled; a re-run sends {len(stub.requests):,} requests (the target's)")
        for round_ in range(args.rounds):
            for side, src in sides.items():
                stub.reset()
                started, exited, cpu = timed_run(configs[side], src, bytecode)
                stamps = [r.at for r in stub.requests]
                row = (cpu, exited - started, min(stamps) - started, exited - max(stamps))
                figures[side].append(row)
                print(
                    f"round {round_ + 1}, {side}: "
                    + ", ".join(f"{n} {v:.3f} s" for n, v in zip(FIGURES, row, strict=True))
                )
    medians = {
        side: [statistics.median(column) for column in zip(*rows, strict=True)] for side, rows in figures.items()
    }
    for side, values in medians.items():
        print(
            f"{side}, medians of {args.rounds}: "
            + ", ".join(f"{n} {v:.3f} s" for n, v in zip(FIGURES, values, strict=True))
        )
    if "before" in sides:
        ratios = ", ".join(
            f"{n} {a / b:.3f}" for n, a, b in zip(FIGURES, medians["this"], medians["before"], strict=True)
        )
        lower = sum(a[0] < b[0] for a, b in zip(figures["this"], figures["before"], strict=True))
        print(f"this / before: {ratios}; CPU lower in {lower} of {args.rounds} rounds")
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
