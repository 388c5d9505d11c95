"""Which LLM plays each role, and how it is called."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ._base import Section

ROLES = ("user", "validator", "judge", "target")

ROLE_DEFAULT_PARAMS: dict[str, dict[str, Any]] = {  # applied by models.get_model
    "judge": {"temperature": 0.0},
    "validator": {"temperature": 0.0},
}
"""Generation parameters a role gets unless its binding's ``params`` set them. The judge and the validator decide
(a verdict, not prose): sampling only adds noise to their decisions, and a provider's own default (1.0 on OpenAI)
made two judgements of the same turn disagree. The user model keeps the provider's default: the variety of its
questions is what repeats sample."""


class Prices(Section):
    """What a model costs, in US dollars per 1 million tokens."""

    input_per_1m: float = Field(ge=0)
    """Price of 1M prompt tokens."""
    output_per_1m: float = Field(ge=0)
    """Price of 1M completion tokens."""
    cached_input_per_1m: float | None = Field(default=None, ge=0)
    """Price of 1M prompt tokens the provider served from its prompt cache (a prefix it had seen); unset: the
    input price (no discount assumed)."""


class ModelSpec(Section):
    """One model binding. A plain string in YAML (`judge: openai/gpt-4o-mini`) is shorthand for `{model: ...}`."""

    model: str
    """provider/model, e.g. openai/gpt-4o-mini, llamacpp/default, scripted/echo."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server, Gemini...)."""
    api_key: str | None = None
    """API key; prefer ${ENV_VAR} interpolation. Never written to disk."""
    api_key_env: str | None = None
    """Environment variable that holds the key (named in 401 errors)."""
    api_key_from_env: str | None = None
    """The ``${VAR}`` that ``api_key`` was written as (``api_key: ${JUDGE_KEY}``), set by the config loader from
    the YAML text and named when the key is refused. Never the key itself."""
    stop_after_failures: int = Field(default=3, ge=1)
    """Stop the run when this role's model fails this many requests (each after its retries) without one success
    in the session; a refused credential (HTTP 401/403) stops it at once. The twin of the target's stop rule."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Generation parameters forwarded to the backend: temperature, max_tokens, seed..."""
    max_concurrency: int = Field(default=64, ge=1)
    """Calls in flight at once for this model (shared by every role bound to the same model and endpoint). The
    default, 64, is sized for a hosted API's paid tiers (OpenAI's second tier allows 5,000 requests a minute, 160
    calls in flight at 2 s a call); on a lower tier the limit adapts: a 429 halves it and successes raise it again
    (its lowest is in the manifest). Below 64 the judge's last round of a run waits on it: 20 conversations ending
    together leave 120 judge calls, 4 rounds at 32 and 2 at 64 (issue 13, L = 1 s: 1.20x and 1.09x the run's
    critical path). For a local
    server, set it to the server's parallel slots (llama.cpp `--parallel`, `OLLAMA_NUM_PARALLEL`): more only queue
    there, against `timeout_s`. The embedded `llamacpp/...` backend answers one call at a time: its default is 1."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Optional rate limit."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Timeout of one call."""
    max_retries: int = Field(default=4, ge=0)
    """Retries on 429, 5xx, timeouts and connection errors."""
    backoff_s: float = Field(default=1.0, ge=0)
    """Wait before the first retry; it doubles each retry (with jitter, capped at 60 s). Retry-After wins."""
    prices: Prices | None = Field(default=None, validation_alias=AliasChoices("price", "prices"))
    """``price:`` per 1M tokens (``prices:`` is read too); overrides the price library. Without a price, cost is
    unknown (never 0), and a cost budget over the model is refused."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Backend-specific options (e.g. n_ctx for llamacpp)."""
    prompt_profile: Literal["base", "chat"] | None = None
    """Which prompts the roles send: `chat` (instructions, for instruction-tuned models) or `base` (short
    completion-style few-shot prompts with tightly bounded JSON, for base models). Unset: `base` for
    llamacpp/default (the packaged Gemma-3-270M is a base model), `chat` for every other model."""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        value = {"model": value} if isinstance(value, str) else value
        if isinstance(value, dict) and "max_concurrency" not in value:
            if str(value.get("model", "")).startswith("llamacpp/"):
                value = {**value, "max_concurrency": 1}  # one llama context in one worker: calls only queue
        return value

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]


class ModelsConfig(Section):
    """Models per role. `default` fills any role left out."""

    default: ModelSpec | None = None
    """Used for every role not given explicitly."""
    user: ModelSpec | None = None
    """The simulated user (conversation generator)."""
    validator: ModelSpec | None = None
    """The conversation validator; a different model from `user` avoids self-preference."""
    judge: ModelSpec | None = None
    """The evaluation judge."""
    target: ModelSpec | None = None
    """The reference RAG system's generator (only used by the built-in target)."""

    def for_role(self, role: str) -> ModelSpec | None:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
        return getattr(self, role) or self.default


class BudgetConfig(Section):
    """A cap that stops a run cleanly, with everything finished so far saved."""

    max_cost_usd: float | None = Field(default=None, gt=0)
    """Stop when the known cost reaches this."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Stop when prompt + completion tokens reach this."""


class CacheConfig(Section):
    """The model-call cache (SQLite, content-addressed)."""

    enabled: bool = True
    """Serve identical calls from the cache."""
    dir: str = ".ragdive-cache"
    """Folder of the cache database."""
