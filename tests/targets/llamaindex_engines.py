"""Engines for the llamaindex target's tests: a tiny in-memory index with llama-index-core's own mock LLM and
mock embeddings (no network, no key). Imported only by tests that skip without llama-index-core."""

from __future__ import annotations

from typing import Any

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

DOCS = [
    Document(
        text="The harbour museum opened in 1954. It keeps the logbooks of forty ships.",
        id_="harbour",
        metadata={"source": "harbour.md", "section": "history"},
    ),
    Document(text="Tea should be brewed at 80 degrees for three minutes.", id_="tea", metadata={"source": "tea.md"}),
]


def _index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(DOCS, embed_model=MockEmbedding(embed_dim=8))


INDEX = _index()
# MockLLM without max_tokens answers with its prompt: the answer carries the retrieved text, as a real RAG's would
query_engine = INDEX.as_query_engine(llm=MockLLM(), similarity_top_k=2)
chat_engine = INDEX.as_chat_engine(chat_mode="condense_plus_context", llm=MockLLM(), similarity_top_k=1)


def make_chat_engine(top_k: int = 1) -> Any:
    """A factory: one chat engine (and memory) per conversation."""
    return INDEX.as_chat_engine(chat_mode="condense_plus_context", llm=MockLLM(), similarity_top_k=top_k)


not_an_engine = {"answer": "no"}
