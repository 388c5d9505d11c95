"""CPU of a run's per-record path, this checkout against another side by side: every line a 200 x 5 run writes
(the conversation and score lines' JSON, cap and masking; the spend journal's lines) and reads back (the records at
the end of a run, the counts while it runs).

    python benchmarks/record_lines.py --before SRC [--conversations 200] [--turns 5] [--rounds 5]

Makes one real run on the stub (`ragdive run`, every call made, as throughput.py's), then per round, in a fresh
process for each side (alternately), the process CPU of: ``to_json_line`` of each of its conversations and scores
(what the store writes, without the disk); a spend journal's line for each model call (``append_call``, to a file
in a temporary folder) and for each as a cache hit (``append_cached``); reading its conversations and scores back
(``read_jsonl``) and counting them (``FileCounts``). Each part is the best of 3 passes in its process. Prints each
side's median per part, the ratio, and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from throughput import experiment, synthetic_corpus

from ragdive.testing import StubProcess

PARTS = ("write lines", "spend calls", "spend hits", "read records", "count files")

MEASURE = """
import sys, tempfile, time
from pathlib import Path
from ragdive.records import Conversation, Score, Usage
from ragdive.store.counts import FileCounts
from ragdive.store.jsonl import read_jsonl, to_json_line
from ragdive.store.spend_journal import SpendJournal, read_journal
run = Path(sys.argv[1])
conversations = read_jsonl(run / "conversations.jsonl", Conversation).records
scores = read_jsonl(run / "evaluations.jsonl", Score).records
calls = [(s.role, s.model, Usage(prompt_tokens=s.prompt_tokens, completion_tokens=s.completion_tokens,
          cost_usd=s.cost_usd, provider_cached_tokens=s.provider_cached_tokens))
         for lines in read_journal(run).values() for s in lines]
folder = Path(tempfile.mkdtemp())

def write_lines():
    for record in conversations + scores:
        to_json_line(record, 100_000)

def spend(cached):
    journal = SpendJournal(folder / "spend.jsonl")
    for role, model, usage in calls:
        if cached:
            journal.append_cached(role, model)
        else:
            journal.append_call(role, model, usage)
    (folder / "spend.jsonl").unlink()

def read_records():
    read_jsonl(run / "conversations.jsonl", Conversation)
    read_jsonl(run / "evaluations.jsonl", Score)

parts = [write_lines, lambda: spend(False), lambda: spend(True), read_records, lambda: FileCounts(run).update()]
best = []
for part in parts:
    times = []
    for _ in range(3):
        started = time.process_time()
        part()
        times.append(time.process_time() - started)
    best.append(min(times))
print(" ".join(f"{t:.6f}" for t in best), len(conversations), len(scores), len(calls))
"""


def measure(src: Path, run: Path) -> tuple[list[float], str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", MEASURE, str(run)], env=env, check=True, capture_output=True, text=True)
    *times, conversations, scores, calls = out.stdout.split()
    return [float(t) for t in times], f"{conversations} conversations, {scores} scores, {calls} model calls"


def make_run(root: Path, conversations: int, turns: int) -> Path:
    with StubProcess(reply="ragdive.testing.role_replies:unique_roles") as stub:
        corpus = synthetic_corpus(root / "corpus", documents=max(30, conversations))
        config = experiment(stub.base_url, corpus, root / "out", conversations, turns, None)
        config_path = root / "experiment.yaml"
        config_path.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)))
        done = subprocess.run(
            [sys.executable, "-m", "ragdive", "run", str(config_path)], capture_output=True, text=True, check=True
        )
    return Path(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout's src/")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sides = {"this": Path(__file__).resolve().parents[1] / "src", "before": args.before.resolve()}
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp), args.conversations, args.turns)
        cpu: dict[str, list[list[float]]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, src in sides.items():  # interleaved: the machine's load drifts between measurements
                times, what = measure(src, run)
                cpu[side].append(times)
    print(f"{args.rounds} rounds on a {args.conversations} x {args.turns} run ({what}); CPU ms, median of rounds:")
    print(f"  {'part':14s} {'this':>8s} {'before':>8s}  ratio")
    for i, part in enumerate(PARTS):
        this, before = (statistics.median(t[i] for t in cpu[side]) * 1e3 for side in sides)
        print(f"  {part:14s} {this:8.1f} {before:8.1f}  {this / before:.2f}")
    this, before = (statistics.median(sum(t) for t in cpu[side]) * 1e3 for side in sides)
    print(f"  {'all':14s} {this:8.1f} {before:8.1f}  {this / before:.2f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
