"""Dense retrieval: cosine similarity between the query's embedding and every chunk's (exact, numpy)."""

from __future__ import annotations

import numpy as np

from ..embeddings import Embedder
from .base import Hit, Retriever


class DenseRetriever(Retriever):
    def __init__(self, embedder: Embedder, vectors: np.ndarray) -> None:
        self.embedder = embedder
        self.vectors = vectors

    def search(self, query: str, k: int) -> list[Hit]:
        k = min(k, len(self.vectors))
        if k == 0:
            return []
        scores = self.vectors @ self.embedder.query(query)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [Hit(int(i), float(scores[i])) for i in top]
