"""The one contract every LLM backend implements.

Backends only translate a request to their provider and back. Retries, limits, cache, structured-output repair
and usage accounting live in the `Model` wrapper (model.py), never in a backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..records import Usage


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class GenerateParams(BaseModel):
    """Generation parameters; backends forward what their provider understands."""

    model_config = ConfigDict(extra="allow")

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: list[str] | None = None


class Completion(BaseModel):
    """What a model call returns."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    """Raw text of the answer."""
    parsed: Any = None
    """The validated pydantic object when a schema was asked for (filled by the wrapper)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens spent (and cost, when the price is known)."""
    model: str = ""
    """provider/model that answered."""
    latency_s: float = 0.0
    """Wall time of the call (0 for a cache hit is not assumed: it is the lookup time)."""
    finish_reason: str | None = None
    """stop, length, ... as the provider reports it."""
    cached: bool = False
    """Served from the cache."""


class ModelBackend(ABC):
    """A provider's model. ``name`` is the provider/model string it was created from."""

    provider: str = ""

    def __init__(self, name: str, **options: Any) -> None:
        self.name = name
        self.options = options

    @abstractmethod
    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
    ) -> Completion:
        """Answer ``messages``. With ``schema``, ask the provider for JSON matching
        ``schema.model_json_schema()`` as well as it can; the wrapper validates and repairs."""

    def size_for(self, max_in_flight: int) -> None:  # noqa: B027 - optional hook
        """Told by the wrapper how many calls it will have in flight at most (its limiter's ceiling): a backend
        with a connection pool sizes it so (the HTTP client's own default would cap or churn connections)."""

    def bounded_by(self, timeout_s: float) -> None:  # noqa: B027 - optional hook
        """Told by the wrapper that every call is cut off after ``timeout_s`` seconds as a whole (its own timeout):
        a backend may drop a looser timeout of its own that could never fire first."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients or model memory."""
