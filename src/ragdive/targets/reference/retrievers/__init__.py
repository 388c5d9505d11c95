"""Retrievers over the chunks of an index: lexical (BM25), dense (embeddings) and hybrid (reciprocal rank fusion)."""

from .base import Hit, Retriever
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .hybrid import HybridRetriever

__all__ = ["BM25Retriever", "DenseRetriever", "Hit", "HybridRetriever", "Retriever"]
