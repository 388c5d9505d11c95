"""Simulation figures, measured in one run: evidence-check accuracy and cost, related-sampling cost, and how much
the concurrent runner gains over one conversation at a time against a target with latency.

    python benchmarks/simulation_bench.py [--corpus FOLDER_OR_JSONL] [--conversations 120] [--latency-ms 20]

Without --corpus a small synthetic corpus is used. Scripted models (no LLM) isolate ragdive's own overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.corpus import load_documents  # noqa: E402
from ragdive.corpus.sampling import SeedSampler, shared_terms  # noqa: E402
from ragdive.models import Model, ScriptedModel  # noqa: E402
from ragdive.records import Document, TargetReply  # noqa: E402
from ragdive.simulation import (  # noqa: E402
    DialogueSettings,
    DocumentIndex,
    Generator,
    SimulationRunner,
    Validator,
    builtin_personas,
    plan_conversations,
)
from ragdive.store import RunStore  # noqa: E402
from ragdive.targets import DialogueState, Target  # noqa: E402
from tests.simulation.helpers import good_draft  # noqa: E402

SENTENCE = re.compile(r"[^.!?\n]{40,300}[.!?]")


def synthetic(n: int = 60) -> list[Document]:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    return [
        Document(id=f"d{i}", text=". ".join(" ".join(rng.choices(words, k=14)).capitalize() for _ in range(80)) + ".")
        for i in range(n)
    ]


def evidence_figures(docs: list[Document], samples: int = 300) -> None:
    rng = random.Random(1)
    picks = [d for d in docs if len(SENTENCE.findall(d.text)) >= 2]
    rows = {"verbatim": [0, 0], "one word changed": [0, 0], "from another document": [0, 0]}
    elapsed, lookups = 0.0, 0
    for _ in range(samples):
        doc, other = rng.sample(picks, 2)
        true = rng.choice(SENTENCE.findall(doc.text)).strip()
        words = true.split()
        words[rng.randrange(len(words))] = "zzzz"
        cases = {
            "verbatim": true,
            "one word changed": " ".join(words),
            "from another document": rng.choice(SENTENCE.findall(other.text)).strip(),
        }
        index = DocumentIndex([doc])
        for name, quote in cases.items():
            start = time.perf_counter()
            found = index.contains(quote)
            elapsed += time.perf_counter() - start
            lookups += 1
            rows[name][0] += found
            rows[name][1] += 1
    print(f"evidence check on {len(picks)} documents ({samples} samples per case, threshold 0.85)")
    for name, (found, total) in rows.items():
        print(f"  {name:<24} found {found / total:6.1%}")
    print(f"  mean time per lookup     {elapsed / lookups * 1000:.2f} ms (including building the word index)")


def sampling_figures(docs: list[Document]) -> None:
    start = time.perf_counter()
    sampler = SeedSampler(docs, seed=0, mode="related", group_size=2)
    groups = [sampler.for_conversation(i) for i in range(len(docs))]
    elapsed = time.perf_counter() - start
    linked = sum(bool(shared_terms(g)) for g in groups)
    print(
        f"related sampling: {len(docs)} documents indexed and grouped in {elapsed:.2f} s; "
        f"{linked / len(groups):.0%} of pairs share content words"
    )
    for group in groups[:3]:
        print(
            "  e.g. " + " + ".join(d.title or d.id for d in group) + f"  (shared: {', '.join(shared_terms(group)[:5])})"
        )


class LatencyTarget(Target):
    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        await asyncio.sleep(self.latency_s)
        return TargetReply(answer="an answer")


async def runner_seconds(docs: list[Document], conversations: int, concurrency: int, latency_s: float) -> float:
    user = Model(ScriptedModel("scripted/user", responder=good_draft), role="user")
    validator = Model(
        ScriptedModel("scripted/v", responder=lambda m: {"reason": "ok", "failed_checks": [], "valid": True}),
        role="validator",
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore.create(Path(tmp), seed=0)
        plans = plan_conversations(
            conversations, run_seed=0, personas=list(builtin_personas().values()), sampler=SeedSampler(docs, seed=0)
        )
        runner = SimulationRunner(
            store=store,
            plans=plans,
            generator=Generator(user),
            validator=Validator(validator),
            target=LatencyTarget(latency_s),
            settings=DialogueSettings(max_turns=3),
            concurrency=concurrency,
        )
        start = time.perf_counter()
        outcome = await runner.run()
        assert outcome.totals.conversations == conversations
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--conversations", type=int, default=120)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    docs = load_documents(args.corpus) if args.corpus else synthetic()
    print(f"corpus: {args.corpus or 'synthetic'} ({len(docs)} documents)")
    evidence_figures(docs)
    sampling_figures(docs)
    # the scripted user quotes the first sentences of a document: keep documents whose text has them
    single = [d for d in docs if d.text.count(".") >= 4]
    latency = args.latency_ms / 1000
    one = asyncio.run(runner_seconds(single, args.conversations, 1, latency))
    eight = asyncio.run(runner_seconds(single, args.conversations, 8, latency))
    n = args.conversations
    print(f"runner: {n} conversations x 3 turns, target latency {args.latency_ms:.0f} ms, scripted models")
    print(f"  concurrency 1: {one:.2f} s ({n / one:.1f} conversations/s)")
    print(f"  concurrency 8: {eight:.2f} s ({n / eight:.1f} conversations/s), speed-up x{one / eight:.1f}")
    floor = n * 3 * latency
    print(
        f"  ragdive overhead at concurrency 1: {(one - floor) / (n * 3) * 1000:.2f} ms per turn "
        f"(wall time minus the target's {floor:.1f} s)"
    )


if __name__ == "__main__":
    main()
