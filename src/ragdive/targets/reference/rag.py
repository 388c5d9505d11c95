"""The reference RAG system: retrieve the top-k chunks, show the generator the question, the passages and the
history its policy allows, and answer. The generator is a `Model` (role `target`); nothing here talks to an LLM
in any other way. A generator with the `base` prompt profile gets prompts/base/answer.md (a completion-style
transcript with one worked example) and stops at the end of its first line."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from ...config.components import RERANKERS, RETRIEVERS
from ...config.models import ModelSpec
from ...config.target import ReferenceTargetConfig
from ...corpus import load_documents
from ...errors import ConfigError, ModelError, ModelStopped, TargetError
from ...models import GenerateParams, Message, Model, get_model
from ...models.prompting import transcript_messages
from ...records import Context, Document, TargetReply
from ..base import DialogueState, Target
from .embeddings import Embedder, make_embedder
from .index import Index
from .prompts import render
from .retrievers import Retriever


class ReferenceRAG:
    def __init__(
        self,
        config: ReferenceTargetConfig,
        documents: list[Document],
        model: Model,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.history_policy = config.history_policy
        self.index = Index.open(documents, size=config.chunk_size, overlap=config.chunk_overlap, root=config.index_dir)
        retriever = RETRIEVERS.get(config.retriever)
        reranker = RERANKERS.get(config.rerank) if config.rerank != "none" else None
        if embedder is None and (retriever.needs_embedder or (reranker is not None and reranker.needs_embedder)):
            embedder = make_embedder(
                config.embedding,
                base_url=config.embedding_base_url,
                api_key=config.embedding_api_key,
                query_prefix=config.query_prefix,
                passage_prefix=config.passage_prefix,
                workers=config.embedding_workers,
            )
        self.retriever: Retriever = retriever.builder()(self.index, embedder, config)
        self.reranker: Any = None
        if reranker is not None:
            known = self._known_vectors(embedder) if embedder is not None else {}
            self.reranker = reranker.builder()(model, embedder, known)

    def _known_vectors(self, embedder: Embedder) -> dict[str, Any]:
        """A dense index's chunk vectors, when the retriever has one: the embedding reranker need not redo them."""
        if not RETRIEVERS.get(self.config.retriever).needs_embedder:
            return {}
        vectors = self.index.dense(embedder).vectors
        return {chunk.id: vectors[i] for i, chunk in enumerate(self.index.chunks)}

    def describe(self) -> str:
        c = self.config
        return (
            f"reference {c.retriever} k={c.top_k} history={c.history} chunks={c.chunk_size}/{c.chunk_overlap}"
            f"{' rewrite' if c.rewrite_query else ''}"
            f"{f' rerank={c.rerank}/{c.rerank_candidates}' if c.rerank != 'none' else ''} generator={self.model.name}"
        )

    def retrieve(self, query: str, k: int | None = None) -> list[Context]:
        chunks = self.index.chunks
        return [
            Context(text=chunks[h.chunk].text, id=chunks[h.chunk].id, source=chunks[h.chunk].document_id, score=h.score)
            for h in self.retriever.search(query, k or self.config.top_k)
        ]

    async def contexts(self, query: str) -> tuple[list[Context], dict[str, Any]]:
        """The top_k contexts for ``query``: retrieved, or (with a reranker) rerank_candidates retrieved, reordered,
        cut to top_k. The second value describes the rerank for the reply (empty without one)."""
        if self.reranker is None:
            return await asyncio.to_thread(self.retrieve, query), {}
        candidates = await asyncio.to_thread(self.retrieve, query, self.config.rerank_candidates)
        reranked = await self.reranker.rerank(query, candidates, self.config.top_k)
        return reranked.contexts, {"rerank": reranked.describe(self.reranker.method)}

    async def rewrite(self, message: str, history: list[Message]) -> str:
        """A stand-alone query from the conversation; the message itself when there is nothing to resolve."""
        if not history:
            return message
        prompt = render("rewrite", history=history, message=message)
        completion = await self.model.generate([Message(role="user", content=prompt)])
        lines = [line.strip() for line in completion.text.strip().splitlines() if line.strip()]
        return lines[0] if lines else message

    def messages(self, question: str, contexts: list[Context], kept: list[Message]) -> list[Message]:
        """The generator's messages; ``kept`` is the history the policy keeps."""
        if self.model.prompt_profile == "base":
            *example, asked = transcript_messages(render("base/answer", contexts=contexts, question=question))
            return [*example, *kept, asked]
        return [
            Message(role="system", content=render("answer")),
            *kept,
            Message(role="user", content=render("question", contexts=contexts, question=question)),
        ]

    async def query(self, message: str, kept: list[Message]) -> str:
        """What the retriever searches for: a rewrite of the message in the kept history's context, or the kept
        user messages followed by the message, or the message alone (retrieval_history: false)."""
        if self.config.rewrite_query:
            return await self.rewrite(message, kept)
        if not self.config.retrieval_history:
            return message
        return "\n".join([*(m.content for m in kept if m.role == "user"), message])

    async def answer(self, message: str, history: list[Message]) -> TargetReply:
        began = time.perf_counter()
        try:
            kept = self.history_policy.select(history)  # the policy reaches retrieval and generation
            query = await self.query(message, kept)
            contexts, rerank = await self.contexts(query)
            params = GenerateParams(stop=["\n"]) if self.model.prompt_profile == "base" else None
            completion = await self.model.generate(self.messages(message, contexts, kept), params=params)
        except ModelStopped:
            raise  # the target's model died or refuses every call: that stops the run, naming the model
        except ModelError as exc:
            raise TargetError(f"reference RAG generator failed: {exc}") from exc
        raw = {"query": query, "model": completion.model, "usage": completion.usage.model_dump(), **rerank}
        return TargetReply(
            answer=completion.text.strip(), contexts=contexts, latency_s=time.perf_counter() - began, raw=raw
        )


class ReferenceTarget(Target):
    """The reference RAG in-process. Stateless: it answers from the history the caller passes."""

    def __init__(self, rag: ReferenceRAG) -> None:
        self.rag = rag

    def describe(self) -> str:
        return self.rag.describe()

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        return await self.rag.answer(user_message, conversation.history)

    async def aclose(self) -> None:
        """Nothing to release: the generator model belongs to the caller, who built it for role `target`."""


def generator_model(spec: ModelSpec | str) -> Model:
    """The `target` model. A `scripted/...` model may name ``options: {responder: module:function}`` (a
    deterministic test double, e.g. `ragdive.targets.reference.doubles:echo_messages`), so a served reference
    RAG can run without a real LLM."""
    return get_model(spec, role="target")


def build_reference(
    config: ReferenceTargetConfig,
    *,
    corpus: str | Path | None = None,
    corpus_format: str = "auto",
    corpus_encoding: str = "utf-8",
    model: Model | None = None,
    embedder: Embedder | None = None,
) -> ReferenceTarget:
    """``config.corpus`` overrides the experiment's corpus path given as ``corpus``."""
    path = config.corpus or corpus
    if path is None:
        raise ConfigError("reference target: no corpus (set target.corpus or the experiment's corpus.path)")
    if model is None:
        raise ConfigError("reference target: no generator model (set models.target or models.default)")
    documents = load_documents(path, format="auto" if config.corpus else corpus_format, encoding=corpus_encoding)
    return ReferenceTarget(ReferenceRAG(config, documents, model, embedder=embedder))


def describe_reply(reply: TargetReply) -> dict[str, Any]:
    """The reply as the server returns it."""
    return {"answer": reply.answer, "contexts": [c.model_dump() for c in reply.contexts], **(reply.raw or {})}
