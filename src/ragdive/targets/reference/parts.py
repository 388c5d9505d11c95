"""The built-in retrievers and rerankers of the reference RAG, as the registries in config/components.py name
them (``build`` of each RetrieverType / RerankerType)."""

from __future__ import annotations

from typing import Any

from ...config.target import ReferenceTargetConfig
from .embeddings import Embedder
from .index import Index
from .rerank import EmbedderReranker, LLMReranker
from .retrievers import HybridRetriever, Retriever


def bm25(index: Index, embedder: Embedder | None, config: ReferenceTargetConfig) -> Retriever:
    return index.bm25()


def dense(index: Index, embedder: Embedder | None, config: ReferenceTargetConfig) -> Retriever:
    assert embedder is not None  # needs_embedder: the RAG made one
    return index.dense(embedder)


def hybrid(index: Index, embedder: Embedder | None, config: ReferenceTargetConfig) -> Retriever:
    assert embedder is not None
    return HybridRetriever([index.bm25(), index.dense(embedder)], rrf_k=config.rrf_k)


def embedder_reranker(model: Any, embedder: Embedder | None, known_vectors: dict[str, Any]) -> EmbedderReranker:
    assert embedder is not None
    return EmbedderReranker(embedder, known_vectors)


def llm_reranker(model: Any, embedder: Embedder | None, known_vectors: dict[str, Any]) -> LLMReranker:
    return LLMReranker(model)
