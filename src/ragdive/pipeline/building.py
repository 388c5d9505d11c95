"""Building a stage's parts from a resolved config (role overrides were applied once, at the API's edge): the judge
and the evaluator, the settings an already-made run carries in its manifest. Shared by every use case."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from ..config import EvaluationConfig, ExperimentConfig, validate_config
from ..errors import ConfigError
from ..evaluation import Evaluator, Judge
from ..evaluation.metrics import check_metric_names, configured_metrics
from ..models import ModelContext, models_for_roles
from ..redaction import MASK


def _strip_masked(value: Any) -> Any:
    """A manifest's config has its secrets masked; a masked key must not be sent to a provider as if real."""
    if isinstance(value, dict):
        return {k: _strip_masked(v) for k, v in value.items() if v != MASK}
    return value


def settings_from_manifest(manifest_config: dict[str, Any] | None) -> ExperimentConfig:
    """Models, evaluation, cache and budget settings from the non-secret part of a run's manifest (each section
    that does not validate falls back to its defaults)."""
    data = _strip_masked(manifest_config or {})
    sections: dict[str, Any] = {}
    for name in ("models", "evaluation", "cache", "budget"):
        try:
            validate_config({name: data.get(name) or {}}, ExperimentConfig, source="run manifest")
        except ConfigError:
            continue
        sections[name] = data.get(name) or {}
    return validate_config(sections, ExperimentConfig, source="run manifest")


def parse_metrics(option: str | None, default: list[str] | None | EvaluationConfig) -> list[str]:
    """``--metrics a,b``; none given: ``default`` (None: the default metrics; a config's evaluation section: its
    metrics, its custom metrics registered). Checked against the registry."""
    defaults = configured_metrics(default)
    if not option:
        return defaults
    names = [m.strip() for m in option.split(",") if m.strip()]
    if not names:
        raise ConfigError("--metrics: name at least one metric")
    return check_metric_names(names)


def build_judge(config: ExperimentConfig, concurrency: int, *, context: ModelContext | None = None) -> Judge:
    """The judge on ``context`` (default: a fresh one from the config's cache and budget)."""
    check_judge(config)
    model = models_for_roles(config.models, ["judge"], context=context or ModelContext.from_config(config))["judge"]
    return Judge(model, concurrency=concurrency)


def check_judge(config: ExperimentConfig) -> None:
    """The one "no judge" error, for every use case that scores."""
    if config.models.for_role("judge") is None:
        raise ConfigError(
            "no judge model: set models.judge (or models.default) in the config, or pass --model judge=provider/model"
        )


def build_evaluator(
    config: ExperimentConfig,
    metrics: list[str],
    concurrency: int,
    *,
    resources: AsyncExitStack,
    context: ModelContext | None = None,
) -> Evaluator:
    """The configured engine: ragdive's own judge prompts, or Ragas (which talks to its endpoint itself, so its
    calls are outside the model context's cache and budget). Its judge is closed with ``resources``."""
    if config.evaluation.engine == "ragas":
        from ..evaluation.ragas_adapter import RagasEvaluator

        evaluator = RagasEvaluator.from_models(config.models, metrics, concurrency)
    else:
        evaluator = Evaluator(build_judge(config, concurrency, context=context), metrics)
    resources.push_async_callback(evaluator.judge.aclose)
    return evaluator


def hold_context(resources: AsyncExitStack, context: ModelContext) -> ModelContext:
    """``context`` closed (its cache file) with ``resources``, after everything registered later."""
    resources.callback(context.close)
    return context
