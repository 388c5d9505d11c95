"""Import a `module:attribute` named in a config (a python target, a scripted responder, a LangChain runnable, a
LlamaIndex engine...): one resolver, so every such name fails with the same kinds of one-line error. And
`lazy_names`, the one way a package imports some of its names on first use."""

from __future__ import annotations

import importlib
import sys
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


def lazy_names(package: str, homes: dict[str, tuple[str, ...]], *, absolute: bool = False) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package``: each name of ``homes`` (submodule -> names; with ``absolute``, any module
    -> names, e.g. another library's error types) is imported from its module on first use and kept in the
    package's globals, so every later use is the same object, found without a call.
    Why: a package's ``__init__`` importing every submodule loads what a command never uses (issue 27 measured
    ~15 ms of `ragdive run`'s start-up in ``ragdive.analysis`` alone)."""
    home = {name: module if absolute else f"{package}.{module}" for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
