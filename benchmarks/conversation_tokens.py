"""Tokens per evaluated 5-turn conversation, ragdive vs DeepEval, on one stub with real-length documents and contexts.

    python benchmarks/conversation_tokens.py                                  # 10 x 5, generated documents
    python benchmarks/conversation_tokens.py --conversations 20 --corpus CORPUS_FOLDER   # its first 20 documents
    python benchmarks/conversation_tokens.py --topic-scenarios    # DeepEval's scenarios one line, as usually written

Both sides run against the same stub process (ragdive.testing.role_replies:corpus_contexts, no latency) on the
same documents: ~10k-character generated English-like documents (or the .txt/.md files of ``--corpus``), one per
conversation. The stub's target retrieves 4 passages of ~800 characters from those documents for every answer,
for both sides, so each judge sees real-length contexts. ragdive: a whole experiment (simulate + evaluate) with
the default metrics, every document shown whole to its user (max_document_chars unset). DeepEval 4.3.1: its
ConversationSimulator and its multi-turn metrics (benchmarks/deepeval_side.py). The one asymmetry is the input of
the simulated user: ragdive's user is given its seed document; DeepEval's simulator has no document input (its
prompts show the golden's scenario and persona; `golden.context` only reaches the test case), so each of its
scenarios is that conversation's document whole with one line asking about it: the same text, in the one place
DeepEval reads it.

Tokens are counted the same way for both, from what the stub received: characters / 4 (no tokenizer's files are
assumed to be on the machine) of each request's messages plus the JSON schema sent with it (a provider counts
it), and of the reply the stub gave (recomputed from the request: the reply is a function of it, but for the
number in a target's answer). The stub's replies are minimal (one short statement per schema field), so
completion tokens are far below a real model's; requests and prompt tokens are the figures that carry over. The
target's own requests are the RAG system's cost, not the evaluator's: printed apart, not in the totals.
"In a sent prefix": the share of prompt tokens in a prefix the same model was already sent
(ragdive.testing.prefix_cache), what a provider's prompt cache could serve.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from throughput import experiment, ragdive_run

from ragdive.testing import StubProcess
from ragdive.testing.prefix_cache import SeenPrefixes, prompt_text
from ragdive.testing.role_replies import CONTEXTS_FOLDER, corpus_contexts

REPLY = "ragdive.testing.role_replies:corpus_contexts"
CHARS_PER_TOKEN = 4
STAGES = {  # model name on the wire -> what it costs for
    "stub-user": "simulation",
    "stub-validator": "simulation",
    "stub-judge": "judging",
    "rag": "target",
    "simulator": "simulation",  # DeepEval's user and its completion check
    "judge": "judging",
    "target": "target",
}
_WORDS = (
    "the of and to in is was for on that with as by at from his her it an were which are this also be has had "
    "first after their its new two who they but one into other more been most time city river built during "
    "century system water north south between under years later known area part state called local large "
    "early form used work world name until include around village bridge canal island station road church "
    "school market trade museum harbour valley mountain forest lake railway factory mill tower castle garden"
).split()


def generated_corpus(folder: Path, documents: int, chars: int = 10_000) -> Path:
    """``documents`` deterministic documents of ~``chars`` characters of English-like sentences (common words:
    characters per token as in real text, unlike made-up words)."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(documents):
        text = f"Document {i}."
        while len(text) < chars:
            text += " " + " ".join(rng.choices(_WORDS, k=rng.randint(8, 22))).capitalize() + "."
        (folder / f"doc{i:03d}.txt").write_text(text + "\n")
    return folder


def request_chars(body: dict[str, Any]) -> int:
    """Characters a request sends: its messages' text and the JSON schema sent with it (as deepeval_side's
    prompt_chars counts a judge's prompt; not imported, so this module loads without deepeval)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    text = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
    return text + (len(json.dumps(schema)) if schema else 0)


def reply_chars(body: dict[str, Any]) -> int:
    """Characters of the stub's reply text to ``body`` (the contexts beside a target's answer are not model output)."""
    reply = corpus_contexts(body)
    return len(reply if isinstance(reply, str) else str(reply["text"]))


def tally(bodies: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per stage: requests, prompt and completion tokens (characters / 4), and the prompt tokens in a prefix the
    same model was already sent (``bodies`` in the order the stub got them): what a provider's prompt cache could
    serve at its discount (no minimum length applied)."""
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen: dict[str, SeenPrefixes] = defaultdict(SeenPrefixes)
    for body in bodies:
        row = rows[STAGES.get(str(body.get("model")), "other")]
        row["requests"] += 1
        row["prompt"] += request_chars(body) // CHARS_PER_TOKEN
        shared = seen[str(body.get("model"))].add(prompt_text(body.get("messages") or []))
        row["prefix"] += min(shared, request_chars(body)) // CHARS_PER_TOKEN
        row["completion"] += reply_chars(body) // CHARS_PER_TOKEN
        reply = corpus_contexts(body)
        contexts = (reply.get("extra") or {}).get("contexts") or [] if isinstance(reply, dict) else []
        row["context_chars"] += sum(len(c["text"]) for c in contexts)
    return rows


def scenario(document: str) -> str:
    return f"The user has read this document and asks the assistant about what it says.\n\n{document}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--corpus", type=Path, help="a folder of .txt/.md documents (default: generated)")
    parser.add_argument(
        "--topic-scenarios",
        action="store_true",
        help="DeepEval's scenarios as one line naming a topic (its usual use) instead of the document whole",
    )
    args = parser.parse_args()
    if args.corpus and not args.corpus.is_dir():
        print(f"error: --corpus {args.corpus} is not a folder", file=sys.stderr)
        return 2
    try:
        from deepeval_side import deepeval_run
    except ImportError as exc:
        print(f"error: DeepEval's side needs deepeval (the `deepeval` extra): {exc}", file=sys.stderr)
        return 2
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus or generated_corpus(Path(tmp) / "corpus", args.conversations)
        documents = sorted(p for ext in ("*.txt", "*.md") for p in corpus.rglob(ext))[: args.conversations]
        if len(documents) < args.conversations:
            print(f"error: {corpus} has {len(documents)} documents, fewer than --conversations", file=sys.stderr)
            return 2
        if args.corpus:  # its first N documents only, so ragdive's users start from the ones DeepEval's scenarios show
            corpus = Path(tmp) / "corpus"
            corpus.mkdir()
            for path in documents:
                shutil.copy(path, corpus / path.name)
            documents = sorted(corpus.iterdir())
        os.environ[CONTEXTS_FOLDER] = str(corpus)  # the stub process inherits it (and reply_chars reads it here)
        with StubProcess(reply=REPLY, keep_requests=True) as stub:
            config = experiment(stub.base_url, corpus, Path(tmp), args.conversations, args.turns, None)
            config.simulation.max_document_chars = None  # the whole document, as DeepEval's scenario has it
            ours = asyncio.run(ragdive_run(stub, config))
            scenarios = [scenario(" ".join(p.read_text(errors="replace").split())) for p in documents]
            theirs = asyncio.run(
                deepeval_run(stub, args.conversations, args.turns, None, None if args.topic_scenarios else scenarios)
            )
            their_bodies = [r.body for r in stub.requests]
        sides = {"ragdive": tally(ours.bodies), "DeepEval": tally(their_bodies)}  # replies from the documents
        n = args.conversations
        average = sum(len(p.read_text(errors="replace")) for p in documents) // n
    print(
        f"{n} conversations x {args.turns} turns each side (answered turns: ragdive {ours.turns}, DeepEval "
        f"{theirs.turns}; ragdive cache hits {ours.cache_hits}); documents of {average:,} characters on average"
    )
    for side, rows in sides.items():
        target = rows["target"]
        print(f"{side}: contexts of {target['context_chars'] / max(1, target['requests']):,.0f} characters per answer")
    print("per evaluated conversation; tokens = characters / 4")
    heads = f"{'requests':>9} {'prompt':>9} {'in a sent prefix':>17} {'completion':>11} {'total':>9}"
    print(f"{'side':<9} {'stage':<11} {heads}")
    for side, rows in sides.items():
        for stage in ("simulation", "judging", "evaluator", "target"):
            row = rows[stage] if stage != "evaluator" else _sum(rows["simulation"], rows["judging"])
            print(
                f"{side:<9} {stage:<11} {row['requests'] / n:9.1f} {row['prompt'] / n:9,.0f} "
                f"{row['prefix'] / max(1, row['prompt']):17.1%} "
                f"{row['completion'] / n:11,.0f} {(row['prompt'] + row['completion']) / n:9,.0f}"
            )
    print("ratio ragdive / DeepEval (evaluator = simulation + judging)")
    for stage in ("simulation", "judging", "evaluator"):
        a, b = (
            rows[stage] if stage != "evaluator" else _sum(rows["simulation"], rows["judging"])
            for rows in (sides["ragdive"], sides["DeepEval"])
        )
        print(
            f"  {stage:<11} requests {a['requests'] / max(1, b['requests']):.2f}, prompt tokens "
            f"{a['prompt'] / max(1, b['prompt']):.2f}, total tokens "
            f"{(a['prompt'] + a['completion']) / max(1, b['prompt'] + b['completion']):.2f}, prompt tokens outside "
            f"a sent prefix {(a['prompt'] - a['prefix']) / max(1, b['prompt'] - b['prefix']):.2f}"
        )
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


def _sum(*rows: dict[str, int]) -> dict[str, int]:
    return {key: sum(row[key] for row in rows) for key in ("requests", "prompt", "prefix", "completion")}


if __name__ == "__main__":
    sys.exit(main())
