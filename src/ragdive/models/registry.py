"""Models named `provider/model`, created lazily so an unused provider's SDK is never imported."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from ..errors import ConfigError
from .base import ModelBackend

BackendFactory = Callable[..., ModelBackend]

# provider -> "module:attribute", imported on first use
_BUILTIN: dict[str, str] = {
    "scripted": "ragdive.models.scripted:ScriptedModel",
    "openai": "ragdive.models.backends.openai_compat:OpenAIBackend",
    "llamacpp": "ragdive.models.backends.llamacpp:LlamaCppBackend",
    "litellm": "ragdive.models.backends.litellm_backend:LiteLLMBackend",
}
_registered: dict[str, BackendFactory] = {}

ENTRY_POINT_GROUP = "ragdive.models"


def register_backend(provider: str, factory: BackendFactory | str) -> None:
    """Register a backend factory (or "module:attr" for a lazy import) under a provider name."""
    if isinstance(factory, str):
        _BUILTIN[provider] = factory
    else:
        _registered[provider] = factory


def known_providers() -> list[str]:
    names = set(_BUILTIN) | set(_registered)
    names |= {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names)


def _resolve(provider: str) -> BackendFactory:
    if provider in _registered:
        return _registered[provider]
    target = _BUILTIN.get(provider)
    if target is None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == provider:
                factory = ep.load()
                _registered[provider] = factory
                return factory  # type: ignore[no-any-return]
        raise ConfigError(f"unknown model provider {provider!r}; known providers: {', '.join(known_providers())}")
    module_name, attr = target.split(":")
    module = importlib.import_module(module_name)
    factory = getattr(module, attr)
    _registered[provider] = factory
    return factory  # type: ignore[no-any-return]


def create_backend(name: str, **options: Any) -> ModelBackend:
    """Create the backend for ``provider/model``."""
    if "/" not in name:
        raise ConfigError(f"model {name!r} must be named provider/model, e.g. openai/gpt-4o-mini")
    provider = name.split("/", 1)[0]
    return _resolve(provider)(name, **options)
