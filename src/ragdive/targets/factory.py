"""Build the system under test from its config section."""

from __future__ import annotations

from typing import Any

from ..config.target import PythonTargetConfig
from ..errors import ConfigError
from .base import Target


def build_target(config: Any, **context: Any) -> Target:
    """Create the Target for a target config. ``context`` carries what some targets need from the experiment
    (e.g. the corpus path and the `target` model for the reference RAG)."""
    if isinstance(config, PythonTargetConfig):
        from .python_callable import PythonTarget

        return PythonTarget.from_spec(config.callable, config.options)
    raise ConfigError(f"target type {getattr(config, 'type', config)!r} is not supported yet")
