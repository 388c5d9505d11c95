"""The `Model` wrapper: what the rest of ragdive calls. Backends are wrapped, never called directly.

This first version validates structured output. The model-layer issue adds retries with backoff, concurrency and
rate limits, the cache, structured-output repair and the usage ledger here, behind the same `generate` signature.
"""

from __future__ import annotations

import json
import time
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..config.models import ModelSpec
from ..errors import ModelOutputError
from .base import Completion, GenerateParams, Message, ModelBackend
from .registry import create_backend

T = TypeVar("T", bound=BaseModel)


class Model:
    """A backend plus everything every call needs. ``role`` (user, validator, judge, target) labels usage."""

    def __init__(self, backend: ModelBackend, *, role: str | None = None, spec: ModelSpec | None = None) -> None:
        self.backend = backend
        self.role = role
        self.spec = spec or ModelSpec(model=backend.name)

    @property
    def name(self) -> str:
        return self.backend.name

    async def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: GenerateParams | None = None,
        repeat_index: int = 0,
    ) -> Completion:
        """Call the model. With ``schema``, ``Completion.parsed`` is a validated instance or ModelOutputError is
        raised carrying the raw text. ``repeat_index`` separates deliberate repeats in the cache."""
        merged = GenerateParams(**{**self.spec.params, **(params.model_dump(exclude_none=True) if params else {})})
        start = time.perf_counter()
        completion = await self.backend.generate(messages, schema=schema, params=merged)
        completion.latency_s = completion.latency_s or time.perf_counter() - start
        if schema is not None:
            completion.parsed = parse_structured(completion.text, schema, model=self.name)
        return completion

    async def aclose(self) -> None:
        await self.backend.aclose()


def parse_structured(text: str, schema: type[T], *, model: str = "") -> T:
    try:
        return schema.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ModelOutputError(
            f"{model or 'model'} did not return a valid {schema.__name__}: {exc}", raw=text, model=model
        ) from exc


def get_model(spec: ModelSpec | str, *, role: str | None = None, **options: Any) -> Model:
    """Build the wrapped model for a config binding (or a plain "provider/model" string)."""
    if isinstance(spec, str):
        spec = ModelSpec(model=spec)
    backend_options = {**spec.options, **options}
    if spec.base_url:
        backend_options.setdefault("base_url", spec.base_url)
    if spec.api_key:
        backend_options.setdefault("api_key", spec.api_key)
    return Model(create_backend(spec.model, **backend_options), role=role, spec=spec)
