"""Build the system under test from its config section: the target type's builder, from the registry of target
types (config.target.TARGET_TYPES). The built-in types' builders are below, each importing its target lazily."""

from __future__ import annotations

from typing import Any

from ..config.target import (
    HttpTargetConfig,
    LangChainTargetConfig,
    LlamaIndexTargetConfig,
    OpenAIChatTargetConfig,
    PythonTargetConfig,
    ReferenceTargetConfig,
    TargetSection,
)
from ..config.target_types import TARGET_TYPES
from ..errors import ConfigError
from .base import Target


def build_target(config: TargetSection, **context: Any) -> Target:
    """Create the Target for a target config. ``context`` carries what some targets need from the experiment:
    for the reference RAG, ``corpus`` (path; ``config.corpus`` overrides it), ``corpus_format`` and ``model``
    (the `Model` for role `target`)."""
    target = TARGET_TYPES.get(config.type).builder()(config, **context)
    if not isinstance(target, Target):
        raise ConfigError(f"target type {config.type!r} built {type(target).__name__}, not a ragdive Target")
    return target


def build_python(config: PythonTargetConfig, **_: Any) -> Target:
    from .python_callable import PythonTarget

    return PythonTarget.from_spec(config.callable, config.options, timeout_s=config.timeout_s)


def build_http(config: HttpTargetConfig, **_: Any) -> Target:
    from .http import HttpTarget

    return HttpTarget(config)


def build_openai_chat(config: OpenAIChatTargetConfig, **_: Any) -> Target:
    from .openai_chat import OpenAIChatTarget

    return OpenAIChatTarget(config)


def build_langchain(config: LangChainTargetConfig, **_: Any) -> Target:
    from .langchain import LangChainTarget

    return LangChainTarget.from_config(config)


def build_llamaindex(config: LlamaIndexTargetConfig, **_: Any) -> Target:
    from .llamaindex import LlamaIndexTarget

    return LlamaIndexTarget.from_config(config)


def build_reference(config: ReferenceTargetConfig, **context: Any) -> Target:
    from .reference import build_reference

    return build_reference(
        config,
        corpus=context.get("corpus"),
        corpus_format=context.get("corpus_format", "auto"),
        corpus_encoding=context.get("corpus_encoding", "utf-8"),
        model=context.get("model"),
    )


def build_experiment_target(config: Any, model: Any = None) -> Target:
    """The target of an ExperimentConfig, given what it may need from the rest of the experiment: the
    experiment's corpus (the reference RAG indexes it unless target.corpus says otherwise) and the `target`
    role's model. One place, so `simulate` and `static` can never build the same target differently."""
    if config.target is None:
        raise ConfigError("the config has no `target` section: name the system under test")
    corpus = config.corpus
    return build_target(
        config.target,
        corpus=corpus.path if corpus is not None else None,
        corpus_format=corpus.format if corpus is not None else "auto",
        corpus_encoding=corpus.encoding if corpus is not None else "utf-8",
        model=model,
    )
