"""One way to change a config by path: ``{"simulation.concurrency": 2}``. The Python API's overrides and a sweep's
axes both set paths with `set_path`, and the result is validated as any config is, so an unknown path is the same
error everywhere (the config loader's: the field named, with the closest allowed one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import ConfigError
from .loader import validate_config

M = TypeVar("M", bound=BaseModel)


def set_path(data: dict[str, Any], path: str, value: Any, *, what: str = "override") -> None:
    """``data`` with ``a.b.c`` set to ``value`` (missing sections become mappings); a non-mapping on the way is a
    ConfigError naming where (``what``: how the caller names a path, "override" or "axis")."""
    *parents, leaf = path.split(".")
    if not leaf or not all(parents):
        raise ConfigError(f"{what} {path!r}: not a dotted config path (like simulation.concurrency)")
    node = data
    for i, part in enumerate(parents):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif isinstance(child, dict):
            child = node[part] = dict(child)  # a copy: the caller's data is not changed under it
        if not isinstance(child, dict):
            raise ConfigError(f"{what} {path}: {'.'.join(parents[: i + 1])} is a value, not a section")
        node = child
    node[leaf] = value


def with_paths(config: M, overrides: Mapping[str, Any], *, source: str = "overrides") -> M:
    """A copy of ``config`` with each dotted path set, validated again (an unknown path: the loader's error)."""
    if not overrides:
        return config
    data = config.model_dump()
    for path, value in overrides.items():
        set_path(data, path, value)
    return validate_config(data, type(config), source=source)
