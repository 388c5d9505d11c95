"""Models named `provider/model`: the provider is looked up in the ``models`` registry (entry-point group
``ragdive.models``) and created lazily, so an unused provider's SDK is never imported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ConfigError
from ..registry import Registry
from .base import ModelBackend

BackendFactory = Callable[..., ModelBackend]

PROVIDERS: Registry[BackendFactory] = Registry(
    "models",
    noun="model provider",
    builtins={
        "scripted": "ragdive.models.scripted:ScriptedModel",
        "openai": "ragdive.models.backends.openai_compat:OpenAIBackend",
        "llamacpp": "ragdive.models.backends.llamacpp:LlamaCppBackend",
        "litellm": "ragdive.models.backends.litellm_backend:LiteLLMBackend",
    },
)
"""provider -> backend factory ``(name, **options) -> ModelBackend``, or "module:attr" imported on first use."""

ENTRY_POINT_GROUP = PROVIDERS.group


def register_backend(provider: str, factory: BackendFactory | str) -> None:
    """Register a backend factory (or "module:attr" for a lazy import) under a provider name (a later one wins)."""
    PROVIDERS.add(provider, factory, replace=True)


def unregister_backend(provider: str) -> None:
    PROVIDERS.remove(provider)


def known_providers() -> list[str]:
    return sorted(PROVIDERS.names())


def create_backend(name: str, **options: Any) -> ModelBackend:
    """Create the backend for ``provider/model``."""
    if "/" not in name:
        raise ConfigError(f"model {name!r} must be named provider/model, e.g. openai/gpt-4o-mini")
    provider = name.split("/", 1)[0]
    return PROVIDERS.get(provider)(name, **options)
