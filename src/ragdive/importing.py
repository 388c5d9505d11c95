"""Import a `module:attribute` named in a config (a python target, a scripted responder, a LangChain runnable, a
LlamaIndex engine...): one resolver, so every such name fails with the same kinds of one-line error."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .errors import ConfigError


def import_object(spec: str, *, what: str, shape: str = "module:attribute") -> Any:
    """Resolve ``module:attr.path`` to the object it names; every failure is a ConfigError naming ``what`` was
    meant (``shape``: how the error spells the expected form)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"{what} {spec!r} must be '{shape}'")
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
    return obj


def import_callable(spec: str, *, what: str = "python target") -> Callable[..., Any]:
    """Resolve ``module:attr.path`` to a callable, as `import_object`; a non-callable is a ConfigError too."""
    obj = import_object(spec, what=what, shape="module:callable")
    if not callable(obj):
        raise ConfigError(f"{what}: {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]
