"""The JSON schema of experiment and sweep files, for editors (``# yaml-language-server: $schema=...``): every field
with its docstring as its description, and ``target`` as the union of the registered target types (plug-ins'
included), discriminated by ``type``."""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from .experiment import ExperimentConfig
from .sweep import SweepConfig
from .target_types import target_union

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _experiment_model() -> type[ExperimentConfig]:
    """ExperimentConfig with its ``target`` spelled as the registered types' union (validation dispatches through
    the registry at run time; a schema needs the types written out)."""
    described = ExperimentConfig.model_fields["target"].description
    return create_model(  # type: ignore[call-overload, no-any-return]
        "ExperimentConfig",
        __base__=ExperimentConfig,
        __doc__=ExperimentConfig.__doc__,
        target=(target_union() | None, Field(default=None, description=described)),
    )


def experiment_schema() -> dict[str, Any]:
    """The schema of an experiment YAML file."""
    return {"$schema": DRAFT, **_experiment_model().model_json_schema()}


def sweep_schema() -> dict[str, Any]:
    """The schema of a sweep YAML file (its ``base`` inline or as a path)."""
    described = SweepConfig.model_fields["base"].description
    base: Any = str | _experiment_model()
    model: Any = create_model(  # type: ignore[call-overload]
        "SweepConfig",
        __base__=SweepConfig,
        __doc__=SweepConfig.__doc__,
        base=(base, Field(description=described)),
    )
    return {"$schema": DRAFT, **model.model_json_schema()}
