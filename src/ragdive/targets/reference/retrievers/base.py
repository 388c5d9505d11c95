from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    chunk: int
    """Position of the chunk in the index."""
    score: float
    """Retriever score (BM25 score, cosine similarity, or fused reciprocal-rank score)."""


class Retriever(ABC):
    @abstractmethod
    def search(self, query: str, k: int) -> list[Hit]:
        """At most ``k`` chunks for ``query``, best first (fewer when the index holds fewer, or, for BM25, when
        fewer chunks share a term with the query)."""
