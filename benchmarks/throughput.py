"""Throughput, measured in one run against a fixed-latency OpenAI-compatible stub on loopback (its own process).

For each latency L and size C conversations x T turns:
- ragdive: a whole experiment (simulate + evaluate) through the real openai backend and an openai-chat target,
  every role on the stub, with default settings (or --concurrency N for every limit). Every call is really made:
  the synthetic corpus has a document per conversation (each conversation starts from its own) and the stub's
  target numbers every answer (role_replies:unique_roles), so no two conversations repeat and ragdive's own cache
  (on, as by default, and empty) serves nothing; the requests sent and the cache hits are printed beside it;
- the plain-SDK floor: the official `openai` client sending the very same requests (their recorded bodies) with
  as many in flight as ragdive had at its peak (counted by the stub): what HTTP and the server cost alone. Twice:
  one client for all, one client per model name as ragdive has (the in-flight split by request share), and that
  again on the SDK's aiohttp transport (as ragdive's own calls go: ragdive.http_client), and on bare aiohttp;
  the fastest is the floor. Every request the run sent is replayed (the run's cache answered none of its calls).
  CPU per request: this process's CPU time over the run (and over the bare-aiohttp replay) per request sent;
  ragdive on the loop its commands run on (uvloop's where installed), bare aiohttp on asyncio's, as a plain
  script has it, and again on ragdive's loop (like with like);
- the critical-path bound: the longest chain of dependent calls (the run's longest conversation, counted from its
  record: every draft's user call, every validator call, the target's, times L; then the judge's tail after the
  last answer, as one conversation alone took it), or one conversation alone, or the requests divided by the
  peak in flight, whichever is longest;
- overlap of simulating and judging: when the last conversation was written, when the first and last score were;
- calls/s through the openai backend at L = 0 with the cache off, and on (every call a miss: the write cost), next
  to the plain SDK;
- DeepEval side by side (``--deepeval L:CxT``, default 0.1:50x3; skipped with the reason when deepeval is not
  installed, or with ``--no-deepeval``): its simulator and multi-turn metrics on the same stub at the same size
  (benchmarks/deepeval_side.py), at each side's defaults and with every limit at 100: wall time, judge requests
  per turn and judge prompt characters per turn (Ragas's per-turn figures: benchmarks/judge_calls.py).

    python benchmarks/throughput.py                                    # defaults: a few minutes on 2 cores
    python benchmarks/throughput.py --runs 0.1:200x5 --runs 1:20x5     # the issue's figures
    python benchmarks/throughput.py --concurrency 100                  # every limit raised
    python benchmarks/throughput.py --corpus ../shared/data/squad      # a real corpus (documents are shown whole)
    python benchmarks/throughput.py --runs 0.1:200x5 --no-deepeval --no-cache-figures --profile run.prof

Client and server share the machine's cores: note the load average printed at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from ragdive.config import ExperimentConfig, validate_config
from ragdive.config.models import ModelSpec
from ragdive.models import Message, ModelContext, get_model
from ragdive.models.cache import CompletionCache
from ragdive.pipeline import RunOptions, prepare_experiment, run_experiment
from ragdive.records import Conversation, ModelSpend, Score, Totals
from ragdive.simulation import RunObserver
from ragdive.testing import StubProcess

try:
    from ragdive.sync_edge import new_event_loop, run_loop  # the loop ragdive's commands and sync API run on
except ImportError:  # an older checkout measured side by side: asyncio.run, as its commands had
    new_event_loop, run_loop = asyncio.new_event_loop, asyncio.run  # type: ignore[assignment]

ROLES = ("user", "validator", "judge")
DEFAULT_RUNS = ("0:40x3", "0.1:50x3", "1:10x3")


def loop_kind() -> str:
    """The kind of event loop ragdive runs on here: "uvloop" or "asyncio"."""
    loop = new_event_loop()
    try:
        return type(loop).__module__.split(".")[0]
    finally:
        loop.close()


def synthetic_corpus(folder: Path, documents: int = 30) -> Path:
    """``documents`` documents of 12 random sentences (at least as many as conversations: every conversation
    then starts from a document of its own, so no two first questions are alike)."""
    rng = random.Random(0)
    words = [f"term{i}" for i in range(2000)]
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(documents):
        sentences = [" ".join(rng.choices(words, k=12)).capitalize() + "." for _ in range(12)]
        (folder / f"doc{i:03d}.md").write_text(" ".join(sentences) + "\n")
    return folder


def experiment(base_url: str, corpus: Path, out: Path, conversations: int, turns: int, concurrency: int | None) -> Any:
    """Every role on the stub under its own model name (its own limiter, as distinct models would have)."""

    def spec(name: str) -> dict[str, Any]:
        extra = {"max_concurrency": concurrency} if concurrency else {}
        return {"model": f"openai/stub-{name}", "base_url": base_url, **extra}

    sim: dict[str, Any] = {"conversations": conversations, "max_turns": turns, "max_document_chars": 2000}
    evaluation: dict[str, Any] = {}
    if concurrency:
        sim["concurrency"] = evaluation["concurrency"] = concurrency
    target: dict[str, Any] = {"type": "openai-chat", "base_url": base_url, "model": "rag"}
    return validate_config(
        {
            "name": "throughput",
            "output_dir": str(out / "runs"),
            "cache": {"dir": str(out / "cache")},  # enabled, as by default, and empty: every call a miss
            "models": {role: spec(role) for role in ROLES},
            "corpus": {"path": str(corpus)},
            "simulation": sim,
            "evaluation": evaluation,
            "target": target,
        },
        ExperimentConfig,
        source="benchmark",
    )


class Clock(RunObserver):
    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.last_conversation = 0.0
        self.scores: list[float] = []

    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        self.last_conversation = time.perf_counter() - self.start

    def score(self, score: Score) -> None:
        self.scores.append(time.perf_counter() - self.start)


@dataclass
class RunFigures:
    wall: float
    simulated_at: float
    first_score: float
    last_score: float
    requests: int
    peak: int
    turns: int
    scores: int
    bodies: list[dict[str, Any]]
    longest_chain: int
    """Calls in the longest conversation's chain (see chain_calls)."""
    cache_hits: int
    """Model calls ragdive's own cache answered (not sent): 0 when every call was really made."""
    judge_requests: int
    cpu: float
    """CPU seconds this process spent during the run (the stub runs in its own process)."""
    spend: list[ModelSpend]
    """The manifest's spend lines at the end."""


async def ragdive_run(stub: StubProcess, config: Any) -> RunFigures:
    stub.reset()
    clock = Clock()
    async with AsyncExitStack() as resources:
        prepared = await prepare_experiment(config, resources, RunOptions(observer=clock))
        clock.start, cpu = time.perf_counter(), time.process_time()
        outcome = await run_experiment(prepared, on_score=clock.score)
        wall, cpu = time.perf_counter() - clock.start, time.process_time() - cpu
        cache_hits = sum(line.cached_calls for line in prepared.context.ledger.lines())
    assert outcome.status == "finished", outcome.error
    requests = stub.requests
    totals = outcome.store.read_manifest().totals
    return RunFigures(
        wall=wall,
        simulated_at=clock.last_conversation,
        first_score=min(clock.scores, default=wall),
        last_score=max(clock.scores, default=wall),
        requests=len(requests),
        peak=stub.peak_in_flight,
        turns=totals.turns,
        scores=totals.scores + totals.unscored,
        bodies=[r.body for r in requests],
        longest_chain=max((chain_calls(c) for c in outcome.store.current_conversations()), default=0),
        cache_hits=cache_hits,
        judge_requests=sum(r.body.get("model") == "stub-judge" for r in requests),
        cpu=cpu,
        spend=outcome.store.read_manifest().totals.spend,
    )


def chain_calls(conversation: Conversation) -> int:
    """The model and target calls one conversation made one after another: per turn, each draft (and each draft
    that was not readable) from the user model, each verdict the validator model gave, then the target."""
    return sum(
        len(turn.attempts)
        + len(turn.generation_errors)
        + sum(attempt.verdict.checked_by == "llm" for attempt in turn.attempts)
        + 1
        for turn in conversation.turns
    )


async def sdk_replay(base_url: str, bodies: list[dict[str, Any]], concurrency: int, aiohttp: bool = False) -> float:
    """The floor: the official client, default settings, the same request bodies, ``concurrency`` in flight;
    ``aiohttp``: on the SDK's own aiohttp transport (`openai.DefaultAioHttpClient`, its `aiohttp` extra)."""
    extra = {"http_client": openai.DefaultAioHttpClient()} if aiohttp else {}
    # its default retries, as a user has them
    client = openai.AsyncOpenAI(base_url=base_url, api_key="no-key", **extra)
    queue = iter(bodies)

    async def worker() -> None:
        for body in queue:
            await client.chat.completions.create(**body)

    start = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
        return time.perf_counter() - start
    finally:
        await client.close()


async def aiohttp_replay(base_url: str, bodies: list[dict[str, Any]], concurrency: int) -> tuple[float, float]:
    """The same requests on bare aiohttp (one session, ``concurrency`` in flight, the reply's JSON decoded): what
    any Python client must spend. Returns (wall, CPU seconds of this process)."""
    import aiohttp

    queue = iter(bodies)
    url = f"{base_url}/chat/completions"

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=max(1, concurrency))) as session:

        async def worker() -> None:
            for body in queue:
                async with session.post(url, json=body) as response:
                    response.raise_for_status()
                    await response.json()

        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
        return time.perf_counter() - start, time.process_time() - cpu


async def sdk_replay_per_model(
    base_url: str, bodies: list[dict[str, Any]], concurrency: int, aiohttp: bool = False
) -> float:
    """The floor as ragdive's client side is shaped: one official client per model name (ragdive keeps one per
    model), ``concurrency`` in flight split between them by their share of the requests, all at once. One client
    with every request in flight pays httpcore's pool bookkeeping, which grows with the connections times the
    waiting requests (a profile of the single-client replay at 64 in flight: most of its CPU in
    `_assign_requests_to_connections`)."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        by_model.setdefault(str(body.get("model")), []).append(body)
    shares = {m: max(1, round(concurrency * len(b) / max(1, len(bodies)))) for m, b in by_model.items()}
    start = time.perf_counter()
    await asyncio.gather(*(sdk_replay(base_url, b, shares[m], aiohttp) for m, b in by_model.items()))
    return time.perf_counter() - start


async def calls_per_second(base_url: str, calls: int, concurrency: int, cache_dir: Path | None) -> float:
    """Unique prompts through the openai backend (cache off, or on with every call a miss)."""
    context = ModelContext(cache=CompletionCache(cache_dir) if cache_dir else None)
    spec = ModelSpec(model="openai/stub-bench", base_url=base_url, max_concurrency=concurrency, max_retries=0)
    model = get_model(spec, role="judge", context=context)
    counter = iter(range(calls))

    async def worker() -> None:
        for i in counter:
            await model.generate([Message(role="user", content=f"question {i} {cache_dir}")])

    start = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return calls / (time.perf_counter() - start)
    finally:
        await model.aclose()
        context.close()


async def sdk_calls_per_second(base_url: str, calls: int, concurrency: int) -> float:
    bodies = [{"model": "stub-bench", "messages": [{"role": "user", "content": f"plain {i}"}]} for i in range(calls)]
    return calls / await sdk_replay(base_url, bodies, concurrency)


def parse_run(text: str) -> tuple[float, int, int]:
    latency, _, size = text.partition(":")
    conversations, _, turns = size.partition("x")
    return float(latency), int(conversations), int(turns)


def measure_deepeval(corpus: Path, latency: float, conversations: int, turns: int) -> None:
    """ragdive and DeepEval (simulator + multi-turn metrics, benchmarks/deepeval_side.py) on one stub, the same
    size and latency: at each side's defaults, and with every limit at 100."""
    label = f"L = {latency:g} s, {conversations} x {turns}"
    try:
        import deepeval_side
    except ImportError as exc:
        print(f"\nDeepEval side by side ({label}): skipped: deepeval is not installed ({exc}); extra `deepeval`")
        return
    print(f"\nDeepEval side by side ({label}); judge prompts in characters (messages + schema), not tokens")
    with (
        StubProcess(latency_s=latency, reply=deepeval_side.REPLY, keep_requests=True) as stub,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for concurrency in (None, 100):
            config = experiment(stub.base_url, corpus, Path(tmp) / str(concurrency), conversations, turns, concurrency)
            ours = run_loop(ragdive_run(stub, config))
            theirs = asyncio.run(deepeval_side.deepeval_run(stub, conversations, turns, concurrency))
            judged = [b for b in ours.bodies if b.get("model") == "stub-judge"]
            print(f"  ragdive: {ours.requests:,} requests sent, {ours.cache_hits:,} cache hits")
            ours_chars = sum(map(deepeval_side.prompt_chars, judged))
            setting = "defaults" if concurrency is None else f"concurrency {concurrency}"
            print(
                f"  {setting:<16} ragdive {ours.wall:7.2f} s   DeepEval {theirs.wall:7.2f} s "
                f"(simulation {theirs.simulated:.2f} s)   DeepEval / ragdive {theirs.wall / ours.wall:5.2f}"
            )
            turns_ours, turns_theirs = max(1, ours.turns), max(1, theirs.turns)
            print(
                f"  {'':<16} judge requests per turn: ragdive {len(judged) / turns_ours:.2f}, "
                f"DeepEval {theirs.judge_requests / turns_theirs:.2f}; judge prompt characters per turn: "
                f"ragdive {ours_chars / turns_ours:,.0f}, DeepEval {theirs.judge_chars / turns_theirs:,.0f}"
            )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure_latency(args: argparse.Namespace, corpus: Path, latency: float, conversations: int, turns: int) -> None:
    with (
        StubProcess(latency_s=latency, reply="ragdive.testing.role_replies:unique_roles", keep_requests=True) as stub,
        tempfile.TemporaryDirectory() as tmp,
    ):
        out = Path(tmp)
        config = experiment(stub.base_url, corpus, out / "big", conversations, turns, args.concurrency)
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        big = run_loop(ragdive_run(stub, config))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
            stats = pstats.Stats(profiler, stream=sys.stdout)
            print(f"\nprofile of the ragdive run ({args.profile}), by own time:")
            stats.sort_stats("tottime").print_stats(args.profile_lines)
        nan = float("nan")
        one_client = nan if args.no_sdk else asyncio.run(sdk_replay(stub.base_url, big.bodies, big.peak))
        per_model = nan if args.no_sdk else asyncio.run(sdk_replay_per_model(stub.base_url, big.bodies, big.peak))
        per_model_aio = (
            nan if args.no_sdk else asyncio.run(sdk_replay_per_model(stub.base_url, big.bodies, big.peak, aiohttp=True))
        )
        bare, bare_cpu = asyncio.run(aiohttp_replay(stub.base_url, big.bodies, big.peak))  # as a plain script runs
        same_loop_cpu = bare_cpu
        if loop_kind() != "asyncio":  # and on ragdive's loop, so that the ratio also compares like with like
            same_loop_cpu = run_loop(aiohttp_replay(stub.base_url, big.bodies, big.peak))[1]
        one = run_loop(ragdive_run(stub, experiment(stub.base_url, corpus, out / "one", 1, turns, None)))
    capacity = big.requests * latency / max(1, big.peak)
    judge_tail = max(0.0, one.last_score - one.simulated_at)  # after its line is written: the last judge round
    longest = big.longest_chain * latency + judge_tail
    bound = max(one.wall, capacity, longest)
    label = f"L = {latency:g} s, {conversations} x {turns}"
    print(
        f"\n{label}: {big.requests:,} requests sent ({big.requests / max(1, big.turns):.2f} per turn; judge "
        f"{big.judge_requests / max(1, big.turns):.2f} per turn), ragdive cache hits {big.cache_hits:,}, "
        f"peak {big.peak} in flight, {big.scores:,} scores"
    )
    print(f"  ragdive simulate + evaluate   {big.wall:8.2f} s")
    floor = min(t for t in (one_client, per_model, per_model_aio, bare) if t == t)  # nan: not measured
    for name, seconds in (
        ("plain SDK, one client", one_client),
        ("plain SDK, a client per model", per_model),
        ("the same on aiohttp", per_model_aio),
    ):
        print(f"  {name:<29} {seconds:8.2f} s" if seconds == seconds else f"  {name:<29} not measured (--no-sdk)")
    print(f"  bare aiohttp                  {bare:8.2f} s")
    print(f"  floor (the fastest of these)  {floor:8.2f} s   wall / floor          {big.wall / floor:6.2f}")
    per_request, bare_per_request = 1000 * big.cpu / max(1, big.requests), 1000 * bare_cpu / max(1, big.requests)
    same_loop = 1000 * same_loop_cpu / max(1, big.requests)
    print(
        f"  CPU per request: ragdive {per_request:.2f} ms on {loop_kind()}'s loop; bare aiohttp {bare_per_request:.2f}"
        f" ms on asyncio's (ragdive / aiohttp {per_request / max(1e-9, bare_per_request):.2f})"
        + (
            f", {same_loop:.2f} ms on {loop_kind()}'s (ragdive / aiohttp {per_request / max(1e-9, same_loop):.2f})"
            if loop_kind() != "asyncio"
            else ""
        )
    )
    print(
        f"  critical-path bound           {bound:8.2f} s   wall / bound          {big.wall / bound:6.2f}"
        f"   (longest conversation: {big.longest_chain} calls x L + judge tail {judge_tail:.2f} s = {longest:.2f} s;"
        f" one conversation alone {one.wall:.2f} s; requests x L / peak {capacity:.2f} s)"
    )
    overlap = max(0.0, big.simulated_at - big.first_score)
    print(
        f"  simulation ends at {big.simulated_at:.2f} s; judging from {big.first_score:.2f} s to "
        f"{big.last_score:.2f} s; overlap {overlap:.2f} s "
        f"(wall / (simulation + judging alone) {big.wall / (big.simulated_at + big.last_score - big.first_score):.2f})"
    )


def measure_cache(args: argparse.Namespace) -> None:
    with StubProcess() as stub, tempfile.TemporaryDirectory() as tmp:
        n, c = args.cache_calls, args.cache_concurrency
        # interleaved and repeated: on a shared machine the load drifts between measurements; best of each
        rates: dict[str, list[float]] = {"sdk": [], "off": [], "on": []}
        for round_ in range(args.cache_rounds):
            rates["on"].append(asyncio.run(calls_per_second(stub.base_url, n, c, Path(tmp) / f"r{round_}")))
            rates["off"].append(asyncio.run(calls_per_second(stub.base_url, n, c, None)))
            rates["sdk"].append(asyncio.run(sdk_calls_per_second(stub.base_url, n, c)))
        rows = [
            ("plain SDK", max(rates["sdk"])),
            ("openai backend, cache off", max(rates["off"])),
            ("openai backend, cache on (miss)", max(rates["on"])),
        ]
    print(f"\ncalls/s at L = 0, {n} calls, {c} in flight, best of {args.cache_rounds} interleaved rounds")
    for name, rate in rows:
        print(f"  {name:<34} {rate:8.0f}")
    print(f"  cache on (miss) / cache off        {rows[2][1] / rows[1][1]:8.2f}")
    print(f"  cache off / plain SDK              {rows[1][1] / rows[0][1]:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", action="append", help="LATENCY:CxT, repeatable (default: " + " ".join(DEFAULT_RUNS) + ")"
    )
    parser.add_argument("--concurrency", type=int, default=None, help="every limit (default: ragdive's defaults)")
    parser.add_argument("--corpus", type=Path, default=None, help="a corpus folder (default: synthetic)")
    parser.add_argument("--cache-calls", type=int, default=2000)
    parser.add_argument("--cache-concurrency", type=int, default=64)
    parser.add_argument("--cache-rounds", type=int, default=5)
    parser.add_argument("--no-cache-figures", action="store_true")
    parser.add_argument("--only-cache-figures", action="store_true", help="skip the runs (and DeepEval)")
    parser.add_argument("--deepeval", default="0.1:50x3", help="LATENCY:CxT of the DeepEval side by side")
    parser.add_argument("--no-deepeval", action="store_true", help="skip the DeepEval side by side")
    parser.add_argument("--no-sdk", action="store_true", help="replay on bare aiohttp only (the SDK is slow)")
    parser.add_argument("--profile", default=None, help="cProfile each ragdive run into this file and print it")
    parser.add_argument("--profile-lines", type=int, default=25, help="lines of the printed profile")
    args = parser.parse_args()
    print(f"load average at start: {load()} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        sizes = [parse_run(run)[1] for run in [*(args.runs or DEFAULT_RUNS), args.deepeval]]
        corpus = args.corpus or synthetic_corpus(Path(tmp) / "corpus", documents=max(30, *sizes))
        for run in [] if args.only_cache_figures else args.runs or DEFAULT_RUNS:
            measure_latency(args, corpus, *parse_run(run))
        if not (args.no_deepeval or args.only_cache_figures):
            measure_deepeval(corpus, *parse_run(args.deepeval))
    if not args.no_cache_figures:
        measure_cache(args)
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    sys.exit(main())
