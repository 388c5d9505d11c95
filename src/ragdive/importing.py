"""Import a `module:attribute` named in a config (a python target, a scripted responder...)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .errors import ConfigError


def import_callable(spec: str, *, what: str = "python target") -> Callable[..., Any]:
    """Resolve ``module:attr.path`` to a callable; every failure is a ConfigError naming ``what`` was meant."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"{what} {spec!r} must be 'module:callable'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{what}: cannot import module {module_name!r}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ConfigError(f"{what}: {module_name!r} has no attribute {attr!r}") from exc
    if not callable(obj):
        raise ConfigError(f"{what}: {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]
