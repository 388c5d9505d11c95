"""The time a user waits past the last model call: `ragdive run` as a user starts it (its own process, the CLI),
against the stub in another process, timed on the machine's monotonic clock that both share.

    python benchmarks/tail.py                          # 200 x 5 at L = 0.1 s, and 20 x 5 at L = 1 s
    python benchmarks/tail.py --runs 0.1:50x3          # smaller
    python benchmarks/tail.py --before SRC --rounds 3  # side by side with another checkout's src/ (medians)

Per run: start-up (the process starting to its first request), the tail (the last answer sent to the process
exiting: the summary, report.html, the last manifest), the whole wall, and the critical-path bound (the longest
conversation's chain of calls x L plus one judge round, or requests x L / peak in flight) with wall / bound as the
user waits. Then the same command again on the same cache: a re-run the cache answers (what it sends is printed;
the stub's target answers the same text every time for this one, so every model call can be a hit). The target is
the system under test and is never cached, so that re-run still waits for its answers (1,000 at L at 200 x 5);
so once more with the stub answering at once: what is left is ragdive's own part of a cached re-run (start-up,
the target's calls made, every other call a cache hit, the end of the run). Beside it, the floor no re-run can go
under (rerun_floor.py): a process that starts Python, imports aiohttp and sends the target's same requests on it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import yaml
from throughput import chain_calls, experiment, parse_run, synthetic_corpus

from ragdive.store import RunStore
from ragdive.testing import StubProcess
from ragdive.testing.faults import ReceivedRequest

RERUN = "re-run on the same cache"
AT_ONCE = "re-run on the same cache, the target answering at once"


def cli_env(src: Path | None, bytecode: Path | None) -> dict[str, str]:
    """The command's environment. ``bytecode``: a folder for the compiled modules (PYTHONPYCACHEPREFIX, so
    nothing is written beside the sources), as an installed package has them: a shell that sets
    PYTHONDONTWRITEBYTECODE would otherwise have every start compile ragdive's ~180 modules again (~0.07 s)."""
    env = dict(os.environ)
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def run_cli(config_path: Path, src: Path | None = None, bytecode: Path | None = None) -> tuple[float, float, Path]:
    """(started, exited) on the monotonic clock, and the run directory (the last line of stdout). ``src``: run
    the ragdive of that source folder instead (PYTHONPATH), for a side-by-side comparison."""
    env = cli_env(src, bytecode)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", "run", str(config_path)], capture_output=True, text=True, check=False, env=env
    )
    exited = time.monotonic()
    if done.returncode != 0:
        raise RuntimeError(f"ragdive run exited {done.returncode}: {done.stderr[-2000:]}")
    return started, exited, Path(done.stdout.strip().splitlines()[-1])


@dataclass
class Floor:
    wall: float
    """The floor process's start to its last reply (see rerun_floor.py)."""
    imports: float
    requests: float
    in_flight: int
    run_imports: float

    def __str__(self) -> str:
        return (
            f"a process importing aiohttp and replaying the same requests on it, {self.in_flight} in flight "
            f"(imports {self.imports:.2f} s, requests {self.requests:.2f} s); ragdive run's other third-party "
            f"imports {self.run_imports:.2f} s more"
        )


def rerun_floor(
    stub: StubProcess, requests: list[ReceivedRequest], bodies: Path, bytecode: Path | None, latency: float
) -> Floor:
    """What no cached re-run can skip (benchmarks/rerun_floor.py): Python, aiohttp and the target's requests, sent
    again with as many in flight as the re-run had at its peak, the stub answering at once as it did (then at
    ``latency`` again)."""
    in_flight = max(1, stub.peak_in_flight)
    (path,) = {r.path for r in requests}  # the target's one endpoint: every other call was a cache hit
    bodies.write_text(json.dumps([r.body for r in requests]))
    script = Path(__file__).with_name("rerun_floor.py")
    stub.latency(0.0)
    try:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(script), urljoin(stub.base_url, path), str(bodies), str(in_flight)],
            capture_output=True,
            text=True,
            check=True,
            env=cli_env(None, bytecode),
        )
    finally:
        stub.latency(latency)
    figures = json.loads(done.stdout)
    return Floor(
        figures["replayed_at"] - started,
        figures["imports_s"],
        figures["requests_s"],
        in_flight,
        figures["run_imports_s"],
    )


def measure(
    latency: float,
    conversations: int,
    turns: int,
    reply: str,
    rerun: bool,
    sides: dict[str, Path | None],
    rounds: int,
    bytecode: Path | None,
) -> None:
    with tempfile.TemporaryDirectory() as tmp, StubProcess(latency_s=latency, reply=reply, keep_requests=True) as stub:
        root = Path(tmp)
        corpus = synthetic_corpus(root / "corpus", documents=max(30, conversations))
        for side, src in sides.items():  # untimed: modules compiled, files in the page cache, for every side alike
            config = experiment(stub.base_url, corpus, root / f"warm-{side}", 2, 1, None)
            config_path = root / f"warm-{side}.yaml"
            config_path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)))
            run_cli(config_path, src, bytecode)
        label = f"L = {latency:g} s, {conversations} x {turns}{', replies the cache can answer' if rerun else ''}"
        figures: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
        reruns: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
        attempts = ("first run", RERUN, AT_ONCE) if rerun else ("first run",)
        for round_ in range(rounds):
            for side, src in sides.items():  # interleaved: the machine's load drifts between measurements
                config = experiment(stub.base_url, corpus, root / f"{side}{round_}", conversations, turns, None)
                config_path = root / f"{side}{round_}.yaml"
                config_path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)))
                for attempt in attempts:
                    answers_in = 0.0 if attempt == AT_ONCE else latency
                    stub.reset()
                    stub.latency(answers_in)
                    try:
                        started, exited, run_dir = run_cli(config_path, src, bytecode)
                    finally:
                        stub.latency(latency)
                    requests = stub.requests
                    wall = exited - started
                    name = f"{label}, {side + ', ' if len(sides) > 1 else ''}{attempt}"
                    if not requests:
                        print(f"{name}: 0 requests sent, wall {wall:.2f} s")
                        continue
                    first = min(r.at for r in requests)
                    last_answer = max(r.at for r in requests) + answers_in
                    tail = exited - last_answer
                    if attempt == AT_ONCE:
                        floor = rerun_floor(stub, requests, root / "bodies.json", bytecode, latency)
                        print(
                            f"{name}: {len(requests):,} requests sent; wall {wall:.2f} s = start-up "
                            f"{first - started:.2f} s + calls {last_answer - first:.2f} s + tail {tail:.2f} s; "
                            f"floor {floor.wall:.2f} s (re-run / floor {wall / floor.wall:.2f}): {floor}"
                        )
                        reruns[side].append((wall, tail, floor.wall))
                        continue
                    store = RunStore.open(run_dir)
                    longest = max(chain_calls(c) for c in store.current_conversations())
                    bound = max((longest + 1) * latency, len(requests) * latency / max(1, stub.peak_in_flight))
                    print(
                        f"{name}: {len(requests):,} requests sent; wall {wall:.2f} s = start-up "
                        f"{first - started:.2f} s + calls {last_answer - first:.2f} s + tail {tail:.2f} s; "
                        f"critical-path bound {bound:.2f} s, wall / bound {wall / bound:.2f}"
                    )
                    if attempt == "first run":
                        figures[side].append((first - started, tail, wall / bound))
        if rounds > 1 or len(sides) > 1:
            for side, rows in figures.items():
                start_up, tail, ratio = (statistics.median(column) for column in zip(*rows, strict=True))
                again = ""
                if reruns[side]:
                    wall, rerun_tail, floor = (statistics.median(c) for c in zip(*reruns[side], strict=True))
                    again = (
                        f"; cached re-run, target at once: wall {wall:.2f} s, tail {rerun_tail:.2f} s, "
                        f"floor {floor:.2f} s"
                    )
                print(
                    f"  {label}, {side}: medians of {len(rows)}: start-up {start_up:.2f} s, tail {tail:.2f} s, "
                    f"wall / bound {ratio:.2f}{again}"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", action="append", help="LATENCY:CxT, repeatable (default: 0.1:200x5 1:20x5)")
    parser.add_argument("--no-rerun", action="store_true", help="skip the cached re-run")
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src/: measured side by side")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians printed)")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="modules compiled as the shell says (PYTHONDONTWRITEBYTECODE)"
    )
    args = parser.parse_args()
    sides: dict[str, Path | None] = {"this": None, **({"before": args.before.resolve()} if args.before else {})}
    print("load average at start: {:.2f} {:.2f} {:.2f} ({} cores)".format(*os.getloadavg(), os.cpu_count()))
    with tempfile.TemporaryDirectory() as compiled:
        bytecode = None if args.no_bytecode else Path(compiled)
        print(
            f"modules: {'as the shell says' if bytecode is None else 'compiled once, as installed (untimed warm-up)'}"
        )
        for run in args.runs or ["0.1:200x5", "1:20x5"]:
            replies = "ragdive.testing.role_replies:unique_roles"
            measure(*parse_run(run), replies, False, sides, args.rounds, bytecode)
            if not args.no_rerun:
                replies = "ragdive.testing.role_replies:ragdive_roles"
                measure(*parse_run(run), replies, True, sides, args.rounds, bytecode)
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
