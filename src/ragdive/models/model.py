"""The `Model` wrapper: what the rest of ragdive calls. Backends are wrapped, never called directly.

Every call goes: cache lookup → budget check → concurrency/rate slot (the budget checked again once it is ours)
→ backend under a timeout → retry with backoff on transient failures → usage and cost into the shared ledger →
schema validation, lenient repair and one corrective retry → cache store. Backends only translate requests; they
never retry, cache or count.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pydantic import BaseModel

from ..config.models import ROLE_DEFAULT_PARAMS, ROLES, ModelSpec
from ..errors import ConfigError, ModelError, ModelOutputError, ModelStopped
from ..records import RoleSetup, Usage
from .base import Completion, GenerateParams, Message, ModelBackend
from .cache import cache_key, key_params_json
from .context import ModelContext
from .profiles import PromptProfile, resolve_profile
from .registry import create_backend
from .retry import RetryPolicy, is_retryable, retry_after_of
from .structured import corrective_messages, parse_structured, schema_text
from .usage import cost_of, price_for, unpriced_under_budget

__all__ = ["Model", "get_model", "parse_structured"]


class Model:
    """A backend plus everything every call needs. ``role`` (user, validator, judge, target) labels usage."""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        role: str | None = None,
        spec: ModelSpec | None = None,
        context: ModelContext | None = None,
    ) -> None:
        self.backend = backend
        self.role = role
        self.spec = spec or ModelSpec(model=backend.name)
        defaults = ROLE_DEFAULT_PARAMS.get(role or "")
        if defaults:  # the role's defaults (judge and validator: temperature 0) under what the binding sets
            self.spec = self.spec.model_copy(update={"params": {**defaults, **self.spec.params}})
        self.context = context or ModelContext()
        self.limiter = self.context.limiter_for(self.spec)
        backend.size_for(self.limiter.max_concurrency)
        backend.bounded_by(self.spec.timeout_s)
        self.retry = RetryPolicy(max_retries=self.spec.max_retries, backoff_s=self.spec.backoff_s)
        self.price = price_for(self.spec)
        if self.role in ROLES and self.price is None:
            refused = unpriced_under_budget(self.context.budget.config, {self.role: self.spec})
            if refused:
                raise ConfigError(refused)
        self.health = self.context.health_for(role, self.spec, getattr(backend, "api_key_env", None))
        """The stop rule of this role's model (health.py), shared by every Model of the role in this run."""
        self._base_params = GenerateParams(**self.spec.params)
        self._base_params_key = key_params_json(self._base_params)
        """The base parameters as every cache key of a call with them holds them (made once, not per call)."""
        self.provider = self.name.partition("/")[0]
        self.prompt_profile: PromptProfile = resolve_profile(self.spec)
        """Which prompts the roles send this model: `base` or `chat` (see profiles.py)."""

    @property
    def name(self) -> str:
        return self.backend.name

    def setup(self, prompts: str | None = None) -> RoleSetup:
        """This model as a run's manifest records it for its role; ``prompts``: the fingerprint of what the role
        sends it."""
        return RoleSetup(
            model=self.name,
            params=self._base_params.model_dump(exclude_none=True),
            prompt_profile=self.prompt_profile,
            prompts=prompts,
        )

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
        repeat_index: int | None = None,
    ) -> Completion:
        """Call the model. With ``schema``, ``Completion.parsed`` is a validated instance or ModelOutputError is
        raised carrying the raw text. ``repeat_index`` separates deliberate repeats in the cache (default: the
        run's repeat, from the model's context)."""
        merged = self._merge(params)
        start = time.perf_counter()
        cache = self.context.cache
        key = None
        if cache is not None:
            key = cache_key(
                model=self.name,
                base_url=self.spec.base_url,
                messages=messages,
                schema=schema_text(schema) if schema is not None else None,
                params=merged,
                repeat_index=self.context.repeat_index if repeat_index is None else repeat_index,
                params_json=self._base_params_key if merged is self._base_params else None,
            )
            hit = cache.get(key)
            if hit is not None:
                served = self._from_cache(hit, schema, start)
                if served is not None:
                    return served
                cache.discard(key)  # a stored answer that no longer validates is not an answer

        completion = await self._call(messages, schema, merged)
        if schema is not None:
            completion = await self._parse_or_correct(completion, messages, schema, merged)
        completion.latency_s = time.perf_counter() - start
        if key is not None and cache is not None:
            cache.put(key, completion)
        return completion

    async def settled(self) -> None:
        """Return once this model's cached answers so far are on disk: await it before writing a record that
        was made from them (the cache commits in batches, off the event loop)."""
        if self.context.cache is not None:
            await self.context.cache.settled()

    async def aclose(self) -> None:
        await self.backend.aclose()

    # --- the steps -------------------------------------------------------------------------------------------

    def _merge(self, params: GenerateParams | None) -> GenerateParams:
        if params is None:
            return self._base_params
        if not self.spec.params:
            return params
        return GenerateParams(**{**self.spec.params, **params.model_dump(exclude_none=True)})

    def _from_cache(self, hit: Completion, schema: type[BaseModel] | None, start: float) -> Completion | None:
        parsed = None
        if schema is not None:
            try:  # validated again: the stored text must still be this schema's (a wrong shape is no answer)
                parsed = parse_structured(hit.text, schema, model=self.name)
            except ModelOutputError:
                return None
        # What the cache saved is counted apart; the caller spent nothing on this answer.
        self.context.ledger.record_cached(self.role, self.name, hit.usage)
        # the answer served, made in one go (four validated assignments to the hit cost ~3x that, on every hit)
        return Completion(
            text=hit.text,
            parsed=parsed,
            usage=Usage(cost_usd=0.0),
            model=hit.model or self.name,
            latency_s=time.perf_counter() - start,
            finish_reason=hit.finish_reason,
            cached=True,
        )

    async def _call(
        self, messages: list[Message], schema: type[BaseModel] | None, params: GenerateParams
    ) -> Completion:
        """One logical request: budget check, a slot, the timeout, and retries with backoff."""
        attempt = 0
        while True:
            if self.health.stopped is not None:
                raise self.health.stopped  # the role's model is down or refused: do not call it again
            self.context.budget.check(self.name)
            error: BaseException
            # the judge's calls give way to the simulation's on a shared endpoint (see limits.py)
            async with self.limiter.slot(background=self.role == "judge") as slot:
                if self.health.stopped is not None:
                    # checked again once a slot is ours: a call that waited for one may have waited past the
                    # refusal (a slot freed by a 401 wakes a waiter before that 401 stops the role)
                    raise self.health.stopped
                # and past the budget: the call that held the slot may have reached it ("once reached, no new
                # call starts"; only calls already sent may still finish and be counted)
                self.context.budget.check(self.name)
                try:
                    async with asyncio.timeout(self.spec.timeout_s):
                        completion = await self.backend.generate(messages, schema=schema, params=params)
                except Exception as exc:  # classified below; non-model exceptions are re-raised unchanged
                    error = exc
                else:
                    self.limiter.succeeded()
                    self.health.succeeded()
                    self._account(completion)
                    return completion
            if _throttled(error):
                self.limiter.throttled(slot)  # the endpoint asks for fewer calls at once: AIMD halves the limit
            retrying = is_retryable(error) and attempt < self.retry.max_retries
            kind = fault_kind(error)
            sent = kind != "connection"  # the request reached the model's server (which failed it): a call sent
            self.context.ledger.record_fault(self.role, self.name, kind, retried=retrying, sent=sent)
            if not is_retryable(error):
                self._check_health(error)
                raise error
            if not retrying:
                given_up = self._gave_up(error, attempt + 1)
                self._check_health(given_up)
                raise given_up from error
            await asyncio.sleep(self.retry.delay(attempt, retry_after_of(error)))
            attempt += 1

    def _check_health(self, error: BaseException) -> None:
        """A request failed for good: the stop rule counts it (model failures only; a bug is not the model's). A
        model outside a run's roles (`models check`) has no run to stop: its error is the answer."""
        if self.role not in ROLES:
            return
        if isinstance(error, ModelError | TimeoutError) and not isinstance(error, ModelStopped):
            stopped = self.health.failed(error)
            if stopped is not None:
                raise stopped from error

    def _account(self, completion: Completion) -> None:
        usage = completion.usage
        completion.usage = Usage(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=cost_of(usage, self.price),
            provider_cached_tokens=usage.provider_cached_tokens,
        )
        completion.model = completion.model or self.name
        self.context.ledger.record(self.role, self.name, completion.usage)

    async def _parse_or_correct(
        self, completion: Completion, messages: list[Message], schema: type[BaseModel], params: GenerateParams
    ) -> Completion:
        try:
            completion.parsed = parse_structured(completion.text, schema, model=self.name)
            return completion
        except ModelOutputError as first:
            self.context.ledger.record_fault(self.role, self.name, "unusable_output", retried=True)
            second = await self._call(corrective_messages(messages, completion.text, first), schema, params)
            second.usage = completion.usage + second.usage
            try:
                second.parsed = parse_structured(second.text, schema, model=self.name)
            except ModelOutputError as exc:
                self.context.ledger.record_fault(self.role, self.name, "unusable_output", retried=False)
                raise ModelOutputError(
                    f"{exc} (after one corrective retry)",
                    raw=second.text,
                    usage=second.usage,
                    provider=self.provider,
                    model=self.name,
                ) from exc
            return second

    def _gave_up(self, error: BaseException, attempts: int) -> ModelError:
        if isinstance(error, ModelError):
            reason = str(error)  # already names the model
        elif isinstance(error, TimeoutError):
            reason = f"{self.name}: no answer within timeout_s={self.spec.timeout_s:g}"
        else:
            reason = f"{self.name}: {error or type(error).__name__}"
        return ModelError(
            f"{reason} (gave up after {attempts} attempts)",
            provider=self.provider,
            model=self.name,
            status=getattr(error, "status", None),
            retryable=True,
        )


def _throttled(error: BaseException) -> bool:
    """429, or any answer that says when to come back (Retry-After): the server is over capacity."""
    return getattr(error, "status", None) == 429 or retry_after_of(error) is not None


def fault_kind(error: BaseException) -> str:
    """A failed attempt's kind, as the manifest counts them."""
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, ModelOutputError):
        return "unusable_output"
    status = getattr(error, "status", None)
    if isinstance(status, int):
        return f"http_{status}"
    if isinstance(error, ConnectionError) or "connect" in type(error).__name__.lower():
        return "connection"
    return type(error).__name__


def get_model(
    spec: ModelSpec | str, *, role: str | None = None, context: ModelContext | None = None, **options: Any
) -> Model:
    """Build the wrapped model for a config binding (or a plain "provider/model" string)."""
    if isinstance(spec, str):
        spec = ModelSpec(model=spec)
    backend_options = {**spec.options, **options}
    if spec.base_url:
        backend_options.setdefault("base_url", spec.base_url)
    if spec.api_key:
        backend_options.setdefault("api_key", spec.api_key)
    if spec.api_key_env:
        backend_options.setdefault("api_key_env", spec.api_key_env)
    return Model(create_backend(spec.model, **backend_options), role=role, spec=spec, context=context)
