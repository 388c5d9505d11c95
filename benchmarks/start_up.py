"""The CPU a `ragdive run` spends before its first request, side by side with another checkout: in fresh
processes, what the command loads (`ragdive.cli.main`, then the `run` command as the CLI loads it on first use),
the prompts a default run renders (compiled by jinja, or read compiled from the user's cache folder) and the
report's template.

    python benchmarks/start_up.py --before OTHER_CHECKOUT/src --rounds 10

Each part's process CPU time (time.process_time: every thread of the process) in its own fresh interpreter per
round, the sides interleaved (the machine's load drifts); then medians, the ratio this / before, and in how many
rounds this side's total was lower. Modules are compiled once, untimed, as an installed package has them; the
user's cache folder (XDG_CACHE_HOME) is the shell's, so a side that keeps compiled templates there has them from
its untimed first round, as a user's second run has. `cached_rerun.py` times the whole re-run this start-up
begins.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tail import cli_env

# the prompts a default 200 x 5 run loads (its user, validator and judge with the default metrics)
PROMPTS = [
    ("ragdive.simulation", "generator_turn"),
    ("ragdive.simulation", "generator_system"),
    ("ragdive.simulation", "validator_system"),
    ("ragdive.simulation", "validator_user"),
    *(
        ("ragdive.evaluation", name)
        for name in (
            "context_precision",
            "context_recall",
            "correctness",
            "faithfulness",
            "context_retention",
            "forgetfulness",
        )
    ),
]

MEASURE = """
import json, sys, time
started = time.process_time()
import ragdive.cli.main
from ragdive.cli.lazy import load_command
load_command("run")
imported = time.process_time()
from ragdive.prompt_files import load_prompt
for package, name in json.loads(sys.argv[1]):
    load_prompt(package, name)
prompts = time.process_time()
from ragdive.report.html import environment
environment().get_template("report.html.j2")
report = time.process_time()
print(json.dumps([imported - started, prompts - imported, report - prompts]))
"""

PARTS = ("imports", "prompts", "report template")


def measure(src: Path | None, bytecode: Path) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(PROMPTS)],
        capture_output=True,
        text=True,
        check=True,
        env=cli_env(src, bytecode),
    )
    return [float(x) for x in json.loads(done.stdout)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src/: measured side by side")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    sides: dict[str, Path | None] = {"this": None, **({"before": args.before.resolve()} if args.before else {})}
    print("load average at start: {:.2f} {:.2f} {:.2f} ({} cores)".format(*os.getloadavg(), os.cpu_count()))
    rows: dict[str, list[list[float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as bytecode:
        for src in sides.values():  # untimed: modules compiled, files in the page cache
            measure(src, Path(bytecode))
        for _ in range(args.rounds):
            for side, src in sides.items():
                parts = measure(src, Path(bytecode))
                rows[side].append([*parts, sum(parts)])
    names = (*PARTS, "total")
    medians = {side: [statistics.median(c) for c in zip(*r, strict=True)] for side, r in rows.items()}
    for side, values in medians.items():
        shown = ", ".join(f"{n} {v * 1000:.1f} ms" for n, v in zip(names, values, strict=True))
        print(f"{side}, CPU medians of {args.rounds}: {shown}")
    if "before" in sides:
        pairs = zip(names, medians["this"], medians["before"], strict=True)
        ratios = ", ".join(f"{n} {a / b:.3f}" for n, a, b in pairs)
        lower = sum(a[-1] < b[-1] for a, b in zip(rows["this"], rows["before"], strict=True))
        print(f"this / before: {ratios}; total lower in {lower} of {args.rounds} rounds")
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
