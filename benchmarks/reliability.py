"""Reliability harness: real `ragdive run` processes against the fault-injecting stub (ragdive.testing), with
random faults per family and random `kill -9`s, compared with a run without faults.

    python benchmarks/reliability.py [--conversations 6] [--turns 3] [--kills 8] [--rates 0,0.2,0.5] [--ray-shards 2]

Every role (user, validator, judge) and the target (an openai-chat target) talk to one StubProcess whose answers
are the deterministic offline stand-ins (ragdive.testing.offline:stub_reply), so a run that survived its faults
must equal the run without faults, conversation for conversation and score for score. Each row is one run
(first pass, then one `--resume` when something failed, then `evaluate --retry-failed` for judge failures),
all with the same fault rates. What it prints per row:

- lost / duplicated: planned conversations without a line, turns of a finished conversation missing, scores of
  the clean run with no line; a conversation or score key with two current lines. Must all be 0.
- from fault: a score whose value differs from the clean run's although what it judged is the same (a verdict read
  out of a faulty judge answer). Must be 0. A target that answered differently (a content fault in the target's
  reply is, to ragdive, just what the system under test said) changes what is judged: those items are counted
  apart, as "target changed".
- errors: conversations still marked `error` after the resume (named, resumable, not lost).
- ended early: conversations that stopped before max turns with their reason on the line (e.g. the user model
  gave no readable draft in max_attempts tries: the bounded redraft loop, named, not lost).
- unscored by reason: judge failures and metric-level "nothing to measure" reasons, after --retry-failed.
- req/call: HTTP requests the stub received ÷ logical calls the run recorded (model calls in the manifest's
  spend + target turns): the price of the retries.
- outcome: the run's final status and the exit code of the last command (a run that did not do its job never
  looks finished: incomplete, with its own exit code, when conversations stayed in error or items unscored).
- spend rec/served: model requests in the manifest's spend (calls: requests sent) ÷ model requests the stub
  received (those with a response schema; the target's have none), and the same for prompt tokens (over the
  requests the stub answered with a usage block). After kill -9s it is below 1 by at most the calls in flight
  at each kill.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragdive.store import RunStore, read_journal
from ragdive.testing import FaultRates, StubProcess

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reliability_more as more  # noqa: E402 - this folder's sibling module, not a package

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "src" / "ragdive" / "demo" / "corpus"
METRICS = ["faithfulness", "context_precision", "context_recall", "correctness", "forgetfulness", "context_retention"]


def experiment(base_url: str, conversations: int, turns: int) -> dict[str, Any]:
    # short timeouts and backoffs: a hang costs one timeout, not two minutes; retries as configured by default
    model = {"model": "openai/stub-model", "base_url": base_url, "timeout_s": 1.0, "backoff_s": 0.02}
    return {
        "name": "reliability",
        "seed": 11,
        "models": {"default": model},
        "corpus": {"path": str(CORPUS)},
        "simulation": {"conversations": conversations, "max_turns": turns, "personas": ["precise", "confused"]},
        "target": {
            "type": "openai-chat",
            "base_url": base_url,
            "timeout_s": 1.0,
            "max_retries": 4,
            "retry_backoff_s": 0.02,
        },
        "evaluation": {"metrics": METRICS},
        "cache": {"enabled": False},
    }


def ragdive(*args: str | Path, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", *map(str, args)], capture_output=True, text=True, env=env, check=False
    )
    if check and done.returncode not in (0, 1, 4):  # 4: incomplete (conversations in error, judge failures)
        raise RuntimeError(f"ragdive {' '.join(map(str, args))} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


def only_run(output: Path) -> Path | None:
    runs = [p for p in output.iterdir() if (p / "manifest.json").exists()] if output.exists() else []
    return runs[0] if len(runs) == 1 else None


@dataclass
class Snapshot:
    """What a finished run holds, keyed so two runs can be compared."""

    conversations: dict[str, Any]
    conversation_lines: Counter[str]
    scores: dict[tuple[str, int | None, str], Any]
    score_lines: Counter[tuple[str, int | None, str, str]]
    logical_calls: int
    requests: int = 0
    unscored: Counter[str] = field(default_factory=Counter)
    status: str = ""
    recorded_calls: int = 0
    recorded_prompt_tokens: int = 0

    @classmethod
    def read(cls, run: Path, requests: int = 0) -> Snapshot:
        store = RunStore.open(run)
        current = {c.id: c for c in store.current_conversations()}
        lines = Counter(c.id for c in store.conversations().records if c.status != "error")
        scores = {(s.conversation_id, s.turn_index, s.metric): s for s in store.current_scores()}
        # a score line judged one conversation line; two lines with a value for the same key are a duplicate
        score_lines = Counter(
            (s.conversation_id, s.turn_index, s.metric, str(s.conversation_finished))
            for s in store.scores().records
            if s.scored
        )
        unscored: Counter[str] = Counter()
        for s in scores.values():
            if not s.scored:
                why = "judge failed" if s.details.get("judge_failed") else (s.unscored_reason or "")[:48]
                unscored[why] += 1
        manifest = store.read_manifest()
        spend = manifest.totals.spend
        model_calls = sum(m.calls for m in spend)
        target_turns = sum(len(c.turns) for c in current.values())
        return cls(
            current,
            lines,
            scores,
            score_lines,
            model_calls + target_turns,
            requests,
            unscored,
            status=manifest.status,
            recorded_calls=model_calls,
            recorded_prompt_tokens=sum(m.prompt_tokens for m in spend),
        )


@dataclass
class Served:
    """What the stub served the run's models (the target's requests, which carry no schema, left out)."""

    requests: int = 0
    model_requests: int = 0
    model_prompt_tokens: int = 0
    model_times: list[float] = field(default_factory=list)
    """When each model request arrived (the stub's monotonic clock, shared by every process on the machine)."""

    def received_near(self, kills: list[float], window: float) -> int:
        return sum(1 for at in self.model_times for k in kills if k - window <= at <= k)

    @classmethod
    def read(cls, stub: StubProcess) -> Served:
        got = stub.requests
        models = [r for r in got if r.body.get("response_format")]
        answered = [r for r in models if r.fault.kind not in ("status", "hang", "garbage", "reset")]  # with usage
        tokens = sum(len(str(m.get("content", "")).split()) for r in answered for m in r.body.get("messages", []))
        return cls(len(got), len(models), tokens, [r.at for r in models])


@dataclass
class Row:
    label: str
    errors: int = 0
    lost: dict[str, int] = field(default_factory=lambda: {"conversations": 0, "turns": 0, "scores": 0})
    duplicated: dict[str, int] = field(default_factory=lambda: {"conversations": 0, "scores": 0})
    from_fault: int = 0
    target_changed: int = 0
    ended_early: int = 0
    unscored: Counter[str] = field(default_factory=Counter)
    requests_per_call: float = 0.0
    seconds: float = 0.0
    status: str = ""
    exit_code: int | None = None
    exits: list[int] = field(default_factory=list)
    """Every command's exit code in order, for the rows of several commands (a refused resume, then one that
    completes)."""
    spend_calls: float | None = None
    """Model requests recorded in the manifest ÷ model requests the stub received."""
    spend_tokens: float | None = None
    """Prompt tokens recorded ÷ prompt tokens of the model requests the stub answered."""
    recorded_calls: int | None = None
    """Model requests the manifest counts."""
    unrecorded: int | None = None
    """Model requests the stub received that the manifest does not count (killed runs)."""
    journaled: int | None = None
    """Model requests in the run's spend.jsonl: what the manifest must equal after the resumes."""
    in_flight_at_kills: int | None = None
    """Model requests the stub received in the IN_FLIGHT_S before a kill, summed: those a killed process may have
    sent and never read the answer of (the loss the journal allows)."""
    in_flight_window_s: float | None = None
    """The IN_FLIGHT_S, plus the stub's latency and, on Ray, one poll of the driver."""
    kills_mid_work: int | None = None
    """Kills that came after the stub served new requests since the previous one (not during a start-up)."""
    examples: list[str] = field(default_factory=list)
    """The first few scores from a fault, to look at."""
    said: list[str] = field(default_factory=list)
    """What the commands of this row said (exit codes, error lines), for the rows that test a refusal."""


def _replies(conversation: Any, turn: int | None) -> list[tuple[str | None, list[str]]]:
    turns = conversation.turns if turn is None else [t for t in conversation.turns if t.index == turn]
    return [(t.answer, [c.text for c in t.contexts]) for t in turns]


def same_judged(clean: Snapshot, got: Snapshot, key: tuple[str, int | None, str]) -> bool:
    """Whether the item the score judged (a turn, or a whole conversation) is what the clean run judged."""
    a, b = clean.conversations.get(key[0]), got.conversations.get(key[0])
    return a is not None and b is not None and _replies(a, key[1]) == _replies(b, key[1])


def compare(label: str, clean: Snapshot, got: Snapshot, planned: int, seconds: float) -> Row:
    row = Row(label, seconds=seconds)
    row.lost["conversations"] = planned - len(got.conversations)
    row.errors = sum(c.status == "error" for c in got.conversations.values())
    for cid, conv in got.conversations.items():
        if conv.status == "ended_early" and conv.end_reason and clean.conversations[cid].status != "ended_early":
            row.ended_early += 1  # stopped with its reason on the line: named, not lost
        elif conv.status != "error" and cid in clean.conversations:
            row.lost["turns"] += max(0, len(clean.conversations[cid].turns) - len(conv.turns))
    row.duplicated["conversations"] = sum(n - 1 for n in got.conversation_lines.values() if n > 1)
    row.duplicated["scores"] = sum(n - 1 for n in got.score_lines.values() if n > 1)
    for key in clean.scores:
        conv = got.conversations.get(key[0])
        has_turn = conv is not None and (key[1] is None or any(t.index == key[1] for t in conv.turns))
        if conv is not None and conv.status != "error" and has_turn and key not in got.scores:
            row.lost["scores"] += 1
    for key, score in got.scores.items():
        expected = clean.scores.get(key)
        if not same_judged(clean, got, key):
            row.target_changed += 1
            continue
        if score.scored and (expected is None or expected.value != score.value):
            row.from_fault += 1
            if len(row.examples) < 3:
                was = "unscored" if expected is None or expected.value is None else expected.value
                row.examples.append(f"{key}: {score.value} (without faults: {was}; {score.reason[:120]})")
    row.unscored = got.unscored
    row.requests_per_call = got.requests / got.logical_calls if got.logical_calls else 0.0
    row.status = got.status
    return row


IN_FLIGHT_S = 0.5
RAY_POLL_S = 0.25  # how often a Ray driver drains its workers' records and spend lines (RayExecutor.poll_s)
"""A request that reached the stub this long before a kill may still have been unread by the killed process."""


def journaled_calls(run: Path) -> int:
    return sum(line.calls for lines in read_journal(run).values() for line in lines)


def with_outcome(row: Row, got: Snapshot, served: Served, exit_code: int) -> Row:
    row.exit_code = exit_code
    row.recorded_calls = got.recorded_calls
    row.spend_calls = got.recorded_calls / served.model_requests if served.model_requests else None
    row.spend_tokens = got.recorded_prompt_tokens / served.model_prompt_tokens if served.model_prompt_tokens else None
    return row


class Harness:
    def __init__(
        self, stub: StubProcess, workdir: Path, conversations: int, turns: int, run_args: tuple[str, ...] = ()
    ) -> None:
        self.stub = stub
        self.workdir = workdir
        self.planned = conversations
        self.run_args = run_args
        """More options of every `ragdive run` (``--executor ray --shards 2``: the kills hit a Ray driver)."""
        self.kills: list[float] = []
        self.served_at_kills: list[int] = []
        """The stub's request count at each kill: a kill that came after new requests cut work off."""
        self.config = workdir / "experiment.yaml"
        self.config.write_text(yaml.safe_dump(experiment(stub.base_url, conversations, turns)), encoding="utf-8")

    def faulted_run(self, label: str, rates: FaultRates | None) -> tuple[Path, int, float, int]:
        """One run at these fault rates: first pass, a --resume if a conversation failed, --retry-failed if the
        judge failed; the same rates throughout. Returns the run, the stub's request count, the seconds and the
        exit code of the last command."""
        self.stub.reset()
        self.stub.chaos(rates)
        began = time.perf_counter()
        output = self.workdir / label
        code = ragdive("run", self.config, "--output", output, *self.run_args, check=True).returncode
        run = only_run(output)
        if run is None:
            raise RuntimeError(f"{label}: no run directory in {output}")
        if any(c.status == "error" for c in RunStore.open(run).current_conversations()):
            code = ragdive("run", self.config, "--resume", run, *self.run_args, check=True).returncode
        if any(s.details.get("judge_failed") for s in RunStore.open(run).current_scores()):
            code = ragdive("evaluate", run, "--config", self.config, "--retry-failed", check=True).returncode
        return run, self.stub.request_count, time.perf_counter() - began, code

    def partly(self, label: str) -> Path:
        """A run killed with SIGKILL once its first conversation is on disk (the rest still to do)."""
        self.stub.reset()
        output = self.workdir / label
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragdive", "run", str(self.config), "--output", str(output)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        while proc.poll() is None:
            run = only_run(output)
            if run is not None and (run / "conversations.jsonl").is_file():
                if (run / "conversations.jsonl").read_bytes().count(b"\n") >= 1:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
            time.sleep(0.02)
        proc.wait()
        run = only_run(output)
        assert run is not None, f"{label}: no run directory"
        return run

    def killed_run(
        self, label: str, kills: int, rng: random.Random, rates: FaultRates | None = None
    ) -> tuple[Path, int, float, int]:
        """A run killed with SIGKILL at random moments ``kills`` times, resumed after each, then finished."""
        self.stub.reset()
        self.stub.chaos(rates)
        began = time.perf_counter()
        output = self.workdir / label
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        low, high = (0.2, 1.5) if self.run_args else (0.5, 4.0)
        for _ in range(kills):
            run = only_run(output)
            args = ["--resume", str(run)] if run else ["--output", str(output)]
            proc = subprocess.Popen(
                [sys.executable, "-m", "ragdive", "run", str(self.config), *args, *self.run_args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # its own session: a kill takes the driver's Ray processes with it
            )
            if self.run_args:  # a Ray driver first starts its local cluster: the kill lands once work has begun
                began_at = self.stub.request_count
                while proc.poll() is None and self.stub.request_count == began_at:
                    time.sleep(0.05)
            time.sleep(rng.uniform(low, high))
            if proc.poll() is None:
                kill_session(proc.pid)
                self.kills.append(time.monotonic())  # the stub stamps requests with the same (system) clock
                self.served_at_kills.append(self.stub.request_count)
            proc.wait()
        run = only_run(output)
        where = ["--resume", run] if run else ["--output", output]
        code = ragdive("run", self.config, *where, *self.run_args, check=True).returncode
        run = only_run(output)
        assert run is not None
        return run, self.stub.request_count, time.perf_counter() - began, code


def kill_session(sid: int) -> None:
    """SIGKILL every process of session ``sid`` at once, as a machine going down would: a Ray driver's cluster
    (its workers in process groups of their own) with it, so no worker goes on calling the stub after the kill."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == sid:
                os.kill(int(entry.name), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue


def measure(
    conversations: int,
    turns: int,
    rates: list[float],
    kills: int,
    seed: int = 1,
    keep: Path | None = None,
    extra: bool = True,
    run_args: tuple[str, ...] = (),
    latency_s: float = 0.0,
) -> list[Row]:
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory(prefix="ragdive-reliability-") as tmp,
        StubProcess(reply="ragdive.testing.offline:stub_reply", latency_s=latency_s, keep_requests=True) as stub,
    ):
        workdir = Path(tmp) if keep is None else keep
        workdir.mkdir(parents=True, exist_ok=True)
        harness = Harness(stub, workdir, conversations, turns, run_args)
        run, requests, seconds, code = harness.faulted_run("clean", None)
        clean = Snapshot.read(run, requests)
        rows.append(
            with_outcome(compare("no faults", clean, clean, conversations, seconds), clean, Served.read(stub), code)
        )
        for family in ("transport", "content"):
            for rate in (r for r in rates if r > 0):
                rates_ = FaultRates(**{family: rate}, seed=seed, hang_s=3.0)  # type: ignore[arg-type]
                label = f"{family}-{rate:g}"
                run, requests, seconds, code = harness.faulted_run(label, rates_)
                got = Snapshot.read(run, requests)
                row = compare(f"{family} {rate:g}", clean, got, conversations, seconds)
                rows.append(with_outcome(row, got, Served.read(stub), code))
        if kills:
            run, requests, seconds, code = harness.killed_run("killed", kills, random.Random(seed))
            got = Snapshot.read(run, requests)
            row = compare(f"{kills}x kill -9", clean, got, conversations, seconds)
            served = Served.read(stub)
            row.unrecorded = served.model_requests - got.recorded_calls
            row.journaled = journaled_calls(run)
            # in flight: sent, and its answer (latency_s), then on Ray its journal line (one poll) not yet back
            row.in_flight_window_s = IN_FLIGHT_S + latency_s + (RAY_POLL_S if run_args else 0.0)
            row.in_flight_at_kills = served.received_near(harness.kills, row.in_flight_window_s)
            seen = [0, *harness.served_at_kills]
            row.kills_mid_work = sum(after > before for before, after in zip(seen, seen[1:], strict=False))
            rows.append(with_outcome(row, got, served, code))
        if extra:
            rows += extra_rows(harness, clean, conversations, kills, seed, workdir)
    return rows


def said_exits(row: Row, said: list[str]) -> Row:
    """The row's commands' exit codes, from what they said ('exit 2: error: ...')."""
    row.said = said
    row.exits = [int(m) for line in said for m in re.findall(r"\bexit (-?\d+)", line)[:1]]
    row.exit_code = row.exits[-1] if row.exits else None
    return row


def extra_rows(harness: Harness, clean: Snapshot, planned: int, kills: int, seed: int, workdir: Path) -> list[Row]:
    """Issue 26's rows: two resumes at once, a full disk, a read-only folder, kill -9s under faults, secrets.
    Their req/call counts every request the stub served for the row's run (its first pass included) against the
    calls the run recorded: work done twice by two writers shows as more than 1."""
    rows = []
    began = time.perf_counter()
    run, said = more.concurrent_resumes(harness, harness.partly)
    got = Snapshot.read(run, harness.stub.request_count)
    rows.append(said_exits(compare("2 resumes", clean, got, planned, time.perf_counter() - began), said))
    with more.small_tmpfs("48k") as disk:
        if disk is not None:
            began = time.perf_counter()
            harness.stub.reset()
            full, said = more.disk_full(harness, disk)
            snap = Snapshot.read(full, harness.stub.request_count) if full else None
            row = compare("disk full", clean, snap, planned, 0) if snap else Row("disk full")
            row.seconds = time.perf_counter() - began
            rows.append(said_exits(row, said))
    with more.small_tmpfs("64m") as disk:
        if disk is not None:
            began = time.perf_counter()
            run, said = more.read_only(harness, disk, harness.partly)
            got = Snapshot.read(run, harness.stub.request_count)
            rows.append(said_exits(compare("read-only", clean, got, planned, time.perf_counter() - began), said))
    if kills:
        rates = FaultRates(transport=0.2, seed=seed, hang_s=3.0)
        run, requests, seconds, code = harness.killed_run(
            "killed-faults", max(2, kills // 2), random.Random(seed), rates
        )
        got = Snapshot.read(run, requests)
        row = compare(f"{max(2, kills // 2)}x kill, tr 0.2", clean, got, planned, seconds)
        served = Served.read(harness.stub)
        row.unrecorded = served.model_requests - got.recorded_calls
        row.journaled = journaled_calls(run)
        rows.append(with_outcome(row, got, served, code))
    outputs, leaks, where = more.secrets_grep(harness, workdir)
    row = Row("secrets grep", status="-")
    row.said = [f"{outputs} outputs grepped (run files, cache, report, exports, terminal), {leaks} with the secret"]
    row.said += [f"found in {w}" for w in where]
    rows.append(row)
    return rows


def print_rows(rows: list[Row]) -> None:
    head = (
        f"{'faults':<16}{'lost c/t/s':>12}{'dup c/s':>9}{'from fault':>11}{'target changed':>15}{'errors':>7}"
        f"{'ended early':>12}{'req/call':>9}{'outcome':>24}{'spend rec/served':>18}{'s':>7}"
    )
    print(head)
    for r in rows:
        lost = "/".join(str(v) for v in r.lost.values())
        dup = "/".join(str(v) for v in r.duplicated.values())
        # the extra rows run several commands: their exit codes are in the lines printed under the table
        codes = ",".join(map(str, r.exits)) if r.exits else "-" if r.exit_code is None else str(r.exit_code)
        outcome = f"{r.status} (exit {codes})" if r.exit_code is not None else (r.status or "-")
        calls = "-" if r.spend_calls is None else f"{r.spend_calls:.3f}"
        tokens = "-" if r.spend_tokens is None else f"{r.spend_tokens:.3f}"
        print(
            f"{r.label:<16}{lost:>12}{dup:>9}{r.from_fault:>11}{r.target_changed:>15}{r.errors:>7}{r.ended_early:>12}"
            f"{r.requests_per_call:>9.2f}{outcome:>24}{calls + ' / ' + tokens:>18}{r.seconds:>7.1f}"
        )
    print("spend rec/served: model requests, then prompt tokens, recorded in the manifest / served by the stub")
    for r in rows:
        if r.unrecorded is not None:
            line = (
                f"{r.label}: {r.unrecorded} model requests served but not recorded (manifest {r.recorded_calls}, "
                f"spend.jsonl {r.journaled})"
            )
            if r.in_flight_at_kills is not None:  # under faults a hung request has no in-flight window to count
                line += (
                    f"; {r.in_flight_at_kills} reached the stub within {r.in_flight_window_s} s before a kill; "
                    f"{r.kills_mid_work} of the kills came after new requests"
                )
            print(line)
    for r in rows:
        for example in r.examples:
            print(f"  {r.label}: from a fault: {example}")
        for line in r.said:
            print(f"  {r.label}: {line}")
    print("\nunscored by reason (after --retry-failed)")
    reasons = sorted({why for r in rows for why in r.unscored})
    if not reasons:
        print("  none")
    for why in reasons:
        counts = "  ".join(f"{r.label}={r.unscored.get(why, 0)}" for r in rows)
        print(f"  {why!r}: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=6)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--kills", type=int, default=8, help="random kill -9 + --resume cycles (0: none)")
    parser.add_argument("--rates", default="0,0.2,0.5", help="fault rates per family, comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs in this folder (default: a temp dir)")
    parser.add_argument(
        "--no-extra",
        action="store_true",
        help="skip the rows of two resumes at once, disk full, read-only, kills under faults and the secrets grep",
    )
    parser.add_argument(
        "--ray-shards",
        type=int,
        default=0,
        help="run every `ragdive run` on a local Ray cluster in this many parts (the kills then hit a Ray driver)",
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the stub takes per answer")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    run_args = ("--executor", "ray", "--shards", str(args.ray_shards)) if args.ray_shards else ()
    rows = measure(
        args.conversations,
        args.turns,
        rates,
        args.kills,
        args.seed,
        keep=args.keep,
        extra=not args.no_extra,
        run_args=run_args,
        latency_s=args.latency,
    )
    if args.json:
        print(json.dumps([r.__dict__ for r in rows], indent=1))
    else:
        print_rows(rows)


if __name__ == "__main__":
    main()
