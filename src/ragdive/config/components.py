"""Registries of the reference RAG's parts, named in its config: retrievers (``target.retriever``) and rerankers
(``target.rerank``). Entries are lazy, so checking a config imports neither numpy nor an embedder; a plug-in adds
one with an entry point in ``ragdive.retrievers`` / ``ragdive.rerankers`` naming a RetrieverType / RerankerType."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..registry import Registry, import_entry


@dataclass(frozen=True)
class RetrieverType:
    """``build(index, embedder, config) -> Retriever`` (an object with ``search(query, k) -> list[Hit]``) over the
    reference RAG's chunk index; ``needs_embedder``: the RAG makes the configured embedder for it."""

    build: Callable[..., Any] | str
    needs_embedder: bool = False

    def builder(self) -> Callable[..., Any]:
        return import_entry(self.build) if isinstance(self.build, str) else self.build


@dataclass(frozen=True)
class RerankerType:
    """``build(model, embedder, known_vectors) -> reranker`` (``method`` and ``async rerank(query, candidates,
    keep) -> Reranked``); ``needs_embedder`` as for a retriever."""

    build: Callable[..., Any] | str
    needs_embedder: bool = False

    def builder(self) -> Callable[..., Any]:
        return import_entry(self.build) if isinstance(self.build, str) else self.build


_PARTS = "ragdive.targets.reference.parts"

RETRIEVERS: Registry[RetrieverType] = Registry(
    "retrievers",
    noun="retriever",
    builtins={
        "bm25": RetrieverType(f"{_PARTS}:bm25"),
        "dense": RetrieverType(f"{_PARTS}:dense", needs_embedder=True),
        "hybrid": RetrieverType(f"{_PARTS}:hybrid", needs_embedder=True),
    },
)

RERANKERS: Registry[RerankerType] = Registry(
    "rerankers",
    noun="reranker",
    builtins={
        "embedder": RerankerType(f"{_PARTS}:embedder_reranker", needs_embedder=True),
        "llm": RerankerType(f"{_PARTS}:llm_reranker"),
    },
)
