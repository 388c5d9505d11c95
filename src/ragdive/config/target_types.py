"""The registry of target types: ``target.type`` names an entry, whose config class validates the section and whose
builder makes the Target. A third-party target type is an entry point in the group ``ragdive.targets`` naming a
``TargetType`` (see ragdive/registry.py)."""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, PlainValidator, SerializeAsAny, ValidationError

from ..errors import ConfigError
from ..registry import Registry, import_entry
from .target import (
    HttpTargetConfig,
    LangChainTargetConfig,
    LlamaIndexTargetConfig,
    OpenAIChatTargetConfig,
    PythonTargetConfig,
    ReferenceTargetConfig,
    TargetSection,
)


@dataclass(frozen=True)
class TargetType:
    """A kind of system under test: its config class (a TargetSection whose ``type`` is ``Literal["<name>"]``) and
    the factory building the Target, ``build(config, **context) -> Target`` (or "module:attr", imported when a run
    first builds one, so checking a config never imports a target's dependencies). ``context`` holds what the
    experiment offers a target: ``corpus``, ``corpus_format``, ``corpus_encoding`` and ``model`` (the `target`
    role's Model, or None); take what you need and ``**_`` the rest."""

    config: type[TargetSection]
    build: Callable[..., Any] | str

    def builder(self) -> Callable[..., Any]:
        return import_entry(self.build) if isinstance(self.build, str) else self.build


TARGET_TYPES: Registry[TargetType] = Registry(
    "targets",
    noun="target type",
    builtins={
        "http": TargetType(HttpTargetConfig, "ragdive.targets.factory:build_http"),
        "openai-chat": TargetType(OpenAIChatTargetConfig, "ragdive.targets.factory:build_openai_chat"),
        "python": TargetType(PythonTargetConfig, "ragdive.targets.factory:build_python"),
        "langchain": TargetType(LangChainTargetConfig, "ragdive.targets.factory:build_langchain"),
        "reference": TargetType(ReferenceTargetConfig, "ragdive.targets.factory:build_reference"),
        "llamaindex": TargetType(LlamaIndexTargetConfig, "ragdive.targets.factory:build_llamaindex"),
    },
)
"""Target types by the name written as ``target.type``. The config's discriminator is this registry."""


def _validate_target(value: Any) -> TargetSection:
    """``target:`` by its ``type``, validated by that type's config class. A nested ValidationError is kept whole
    (loader.format_validation_error shows its field paths under ``target``)."""
    if isinstance(value, TargetSection):
        value = value.model_dump()
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping with a `type` ({', '.join(TARGET_TYPES.names())})")
    name = value.get("type")
    if not isinstance(name, str):
        raise ValueError(f"`type` is required: one of {', '.join(TARGET_TYPES.names())}")
    try:
        kind = TARGET_TYPES.get(name)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    try:
        return kind.config.model_validate(value)
    except ValidationError as exc:
        raise NestedError(exc) from None


class NestedError(ValueError):
    """Carries a target config's own ValidationError through the `target` field's validator."""

    def __init__(self, error: ValidationError) -> None:
        super().__init__(str(error))
        self.error = error


TargetConfig = Annotated[SerializeAsAny[TargetSection], PlainValidator(_validate_target)]
"""A target section of any registered type (the registry is the discriminator)."""


def target_union() -> Any:
    """The registered types' configs as one pydantic discriminated union, for the JSON schema."""
    configs = tuple(TARGET_TYPES.get(name).config for name in TARGET_TYPES.names())
    union = configs[0] if len(configs) == 1 else typing.Union[configs]  # noqa: UP007 - built at run time
    return Annotated[union, Field(discriminator="type")]
