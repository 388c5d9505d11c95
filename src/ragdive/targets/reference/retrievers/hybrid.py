"""Hybrid retrieval: reciprocal rank fusion (Cormack et al. 2009) of several retrievers' rankings.

Each retriever contributes 1 / (rrf_k + rank) for every chunk it ranks; ranks, not raw scores, are fused, so BM25
scores and cosines need no calibration against each other."""

from __future__ import annotations

from .base import Hit, Retriever

DEPTH = 4  # each retriever ranks DEPTH * k candidates before fusion


class HybridRetriever(Retriever):
    def __init__(self, retrievers: list[Retriever], rrf_k: int = 60) -> None:
        self.retrievers = retrievers
        self.rrf_k = rrf_k

    def search(self, query: str, k: int) -> list[Hit]:
        fused: dict[int, float] = {}
        for retriever in self.retrievers:
            for rank, hit in enumerate(retriever.search(query, max(k * DEPTH, 20)), start=1):
                fused[hit.chunk] = fused.get(hit.chunk, 0.0) + 1.0 / (self.rrf_k + rank)
        best = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [Hit(chunk, score) for chunk, score in best]
