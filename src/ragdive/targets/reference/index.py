"""The reference RAG's index, persisted on disk and rebuilt only when what it depends on changes.

Layout under ``root``::

    <fingerprint of corpus + chunking>/
        chunks.jsonl                      one chunk per line
        bm25-en-snowball/                 bm25s index (built when a lexical retriever is used)
        dense-<fingerprint of model>.npy  chunk embeddings (one file per embedding model)
    embeddings-<fingerprint of model>.sqlite   every chunk vector ever computed, keyed by chunk text + model
                                      (embedding_cache.py): a new corpus version embeds only its new chunks

Every part is written to a temporary name and renamed into place, so an interrupted build leaves no half index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ...records import Document
from .chunking import TOKENIZER_VERSION, Chunk, chunk_documents
from .embedding_cache import EmbeddingCache, content_key
from .embeddings import Embedder
from .retrievers import BM25Retriever, DenseRetriever
from .retrievers.bm25 import FOLDER as BM25_FOLDER


def corpus_fingerprint(docs: list[Document], size: int, overlap: int) -> str:
    digest = hashlib.sha256(f"{TOKENIZER_VERSION}|{size}|{overlap}".encode())
    for doc in docs:
        digest.update(f"\0{doc.id}\0{doc.source or ''}\0".encode())
        digest.update(hashlib.sha256(doc.text.encode()).digest())
    return digest.hexdigest()[:20]


@dataclass
class Index:
    folder: Path
    chunks: list[Chunk]
    built: list[str] = field(default_factory=list)
    """Parts built (rather than loaded) by this process: chunks, bm25, dense."""
    build_seconds: dict[str, float] = field(default_factory=dict)
    """Time each built part took."""
    embedded: int = 0
    """Chunks this process embedded (the others' vectors came from the embedding cache)."""
    _bm25: BM25Retriever | None = None
    _dense: dict[str, DenseRetriever] = field(default_factory=dict)

    @classmethod
    def open(cls, docs: list[Document], *, size: int, overlap: int, root: Path | str) -> Index:
        folder = Path(root) / corpus_fingerprint(docs, size, overlap)
        path = folder / "chunks.jsonl"
        if path.is_file():
            chunks = [Chunk(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
            return cls(folder, chunks)
        began = time.perf_counter()
        chunks = chunk_documents(docs, size, overlap)
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, "".join(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in chunks).encode())
        return cls(folder, chunks, built=["chunks"], build_seconds={"chunks": time.perf_counter() - began})

    @property
    def texts(self) -> list[str]:
        return [c.text for c in self.chunks]

    def bm25(self) -> BM25Retriever:
        if self._bm25 is None:
            path = self.folder / BM25_FOLDER
            if path.is_dir():
                self._bm25 = BM25Retriever.load(path, len(self.chunks))
            else:
                began = time.perf_counter()
                self._bm25 = BM25Retriever.build(self.texts)
                tmp = Path(tempfile.mkdtemp(dir=self.folder, prefix=".bm25-"))
                self._bm25.save(tmp)
                try:
                    os.replace(tmp, path)
                except OSError:  # another process finished the same index first: theirs is identical
                    shutil.rmtree(tmp, ignore_errors=True)
                self.built.append("bm25")
                self.build_seconds["bm25"] = time.perf_counter() - began
        return self._bm25

    def dense(self, embedder: Embedder) -> DenseRetriever:
        if embedder.name not in self._dense:
            key = hashlib.sha256(embedder.name.encode()).hexdigest()[:12]
            path = self.folder / f"dense-{key}.npy"
            if path.is_file():
                vectors = np.load(path)
            else:
                began = time.perf_counter()
                vectors = self._embed(embedder, self.folder.parent / f"embeddings-{key}.sqlite")
                with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".npy", delete=False) as fh:
                    np.save(fh, vectors)
                os.replace(fh.name, path)
                self.built.append("dense")
                self.build_seconds["dense"] = time.perf_counter() - began
            self._dense[embedder.name] = DenseRetriever(embedder, vectors)
        return self._dense[embedder.name]

    def _embed(self, embedder: Embedder, cache_path: Path) -> np.ndarray:
        """Every chunk's vector: from the cache when its text was embedded before, else embedded now (each text
        once) and cached batch by batch, so an interrupted build resumes where it stopped."""
        cache = EmbeddingCache(cache_path)
        try:
            keys = [content_key(embedder.name, text) for text in self.texts]
            found = cache.get_many(keys)
            todo = list(dict.fromkeys(k for k in keys if k not in found))
            text_of = dict(zip(keys, self.texts, strict=True))
            for indices, batch in embedder.passage_batches([text_of[k] for k in todo]):
                done = [(todo[i], vector) for i, vector in zip(indices, batch, strict=True)]
                cache.put_many(done)
                found.update(done)
            self.embedded += len(todo)
        finally:
            cache.close()
        if not keys:
            return embedder.passages([])
        return np.vstack([found[k] for k in keys]).astype(np.float32)


def _write_atomic(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as fh:
        fh.write(data)
    os.replace(fh.name, path)
