"""An experiment config as the API's use cases take it: a path, a mapping or an ExperimentConfig, with the one
override form (dotted config paths, as a sweep's axes) and the command line's options applied once, here, at the
API's edge: the pipeline is handed a resolved config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig, load_config, validate_config
from ..config.overrides import with_paths
from ..models import apply_model_overrides

ConfigLike = ExperimentConfig | Mapping[str, Any] | str | Path
Overrides = Mapping[str, Any]
"""Dotted config paths to values: ``{"simulation.concurrency": 2, "target.top_k": 5}`` (a sweep's axes' form)."""


def load_experiment(
    config: ConfigLike,
    overrides: Overrides | None = None,
    *,
    models: Sequence[str] | str = (),
    conversations: int | None = None,
    max_turns: int | None = None,
    repeat: int | None = None,
) -> ExperimentConfig:
    """A config from a path, a mapping or an ExperimentConfig (a copy), with ``overrides`` set by path, then
    ``models`` (``ROLE=provider/model`` bindings, or ``provider/model`` for every role: the command line's
    ``--model``), ``conversations``, ``max_turns`` and ``repeat`` (``--conversations``, ``--max-turns``,
    ``--repeat``). An unknown path is the config loader's error, naming the closest allowed field."""
    if isinstance(config, str | Path):
        config = load_config(config)
    elif not isinstance(config, ExperimentConfig):
        config = validate_config(dict(config), ExperimentConfig, source="config")
    config = with_paths(config, overrides or {})
    paths: dict[str, Any] = {}
    if repeat is not None:
        paths["repeat"] = repeat
    if conversations:
        paths["simulation.conversations"] = conversations
    if max_turns:
        paths["simulation.max_turns"] = max_turns
    config = with_paths(config, paths, source="options")
    return with_roles(config, models)


def with_roles(config: ExperimentConfig, models: Sequence[str] | str = ()) -> ExperimentConfig:
    """``config`` with ``models`` bound (``ROLE=provider/model``, or ``provider/model`` for every role): the one
    place a command's ``--model`` is applied. Every use case resolves its config here before building anything."""
    bindings = [models] if isinstance(models, str) else list(models)
    if not bindings:
        return config
    return config.model_copy(update={"models": apply_model_overrides(config.models, bindings)})
