"""An experiment end to end: simulate conversations, then score the same run directory with the judge.

Every role (user, validator, the reference RAG's generator, judge) shares one ModelContext, so the cache, the
usage ledger and the budget cover the whole run. Both stages resume: the simulation skips finished conversations,
the evaluation skips items already in evaluations.jsonl. Also here: building the judge and the evaluator from a
config and ``--model`` overrides, which the `evaluate` and `static` commands share with the pipeline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import ExperimentConfig, validate_config
from .errors import BudgetExceeded, ConfigError
from .evaluation import EvaluationResult, Evaluator, Judge
from .evaluation.metrics import check_metric_names, configured_metrics
from .models import ModelContext, apply_model_overrides, models_for_roles
from .models.selfcheck import check_local_models
from .records import Score
from .redaction import MASK
from .simulation import PreparedRun, RunObserver, RunOutcome, prepare_run, run_simulation
from .store import RunRecorder, RunStore


def with_overrides(
    config: ExperimentConfig,
    models: list[str] | None = None,
    *,
    conversations: int | None = None,
    max_turns: int | None = None,
) -> ExperimentConfig:
    """The config with the command line's ``--model ROLE=provider/model``, ``--conversations`` and
    ``--max-turns`` applied (a copy; the caller's config is unchanged)."""
    config = config.model_copy(deep=True)
    if models:
        config.models = apply_model_overrides(config.models, models)
    changes = {k: v for k, v in {"conversations": conversations, "max_turns": max_turns}.items() if v}
    config.simulation = config.simulation.model_copy(update=changes)
    return config


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


def parse_metrics(option: str | None, default: list[str] | None) -> list[str]:
    """``--metrics a,b``; none given: ``default`` (None: every registered metric). Checked against the registry."""
    if not option:
        return configured_metrics(default)
    names = [m.strip() for m in option.split(",") if m.strip()]
    if not names:
        raise ConfigError("--metrics: name at least one metric")
    return check_metric_names(names)


def build_judge(
    config: ExperimentConfig, overrides: list[str], concurrency: int, *, context: ModelContext | None = None
) -> Judge:
    """The judge on ``context`` (default: a fresh one from the config's cache and budget)."""
    models = apply_model_overrides(config.models, overrides)
    if models.for_role("judge") is None:
        raise ConfigError("no judge model: pass --model judge=provider/model, or set models.judge in the config")
    model = models_for_roles(models, ["judge"], context=context or ModelContext.from_config(config))["judge"]
    return Judge(model, concurrency=concurrency)


def build_evaluator(
    config: ExperimentConfig,
    overrides: list[str],
    metrics: list[str],
    concurrency: int,
    *,
    context: ModelContext | None = None,
) -> Evaluator:
    """The configured engine: ragdive's own judge prompts, or Ragas (which talks to its endpoint itself, so its
    calls are outside the model context's cache and budget)."""
    if config.evaluation.engine == "ragas":
        from .evaluation.ragas_adapter import RagasEvaluator

        return RagasEvaluator.from_models(config.models, overrides, metrics, concurrency)
    return Evaluator(build_judge(config, overrides, concurrency, context=context), metrics)


async def evaluate_store(
    evaluator: Evaluator,
    store: RunStore,
    *,
    retry_failed: bool = False,
    rescore_changed: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> EvaluationResult:
    """Score what is not scored yet, then release the judge whatever happened. ``on_start(total, done)`` is told
    how many items the run has and how many were already scored, before the first judge call."""
    try:
        await check_local_models(evaluator.judge.local_models)  # once per worker: free after the simulation's check
        return await evaluator.evaluate_run(
            store,
            retry_judge_failures=retry_failed,
            rescore_changed=rescore_changed,
            on_start=on_start,
            on_score=on_score,
        )
    finally:
        await evaluator.judge.aclose()


@dataclass
class PreparedExperiment:
    simulation: PreparedRun
    evaluator: Evaluator
    context: ModelContext

    @property
    def store(self) -> RunStore:
        return self.simulation.store


@dataclass
class PipelineOutcome:
    status: str
    """finished, or budget_exceeded (in either stage)."""
    stage: str
    """The last stage that ran: simulation or evaluation."""
    store: RunStore
    simulation: RunOutcome
    evaluation: EvaluationResult | None = None
    error: str | None = None
    metrics: list[str] = field(default_factory=list)
    """Score names as written to evaluations.jsonl."""


def prepare_experiment(
    config: ExperimentConfig,
    *,
    resume: Path | None = None,
    output: Path | None = None,
    observer: RunObserver | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
) -> PreparedExperiment:
    """Check the config (the judge too: a missing judge must not be found after the simulation spent money),
    build every model on one shared context, then create or reopen the run."""
    if config.models.for_role("judge") is None:
        raise ConfigError("no judge model: set models.judge (or models.default), or pass --model judge=provider/model")
    context = ModelContext.from_config(config, no_cache=no_cache, cache_dir=cache_dir)
    evaluator: Evaluator | None = None
    try:
        evaluator = build_evaluator(
            config, [], configured_metrics(config.evaluation.metrics), config.evaluation.concurrency, context=context
        )
        simulation = prepare_run(config, resume=resume, output=output, observer=observer, context=context)
        simulation.check_also.extend(evaluator.judge.local_models)
    except BaseException:
        if evaluator is not None:
            asyncio.run(evaluator.judge.aclose())
        context.close()
        raise
    return PreparedExperiment(simulation=simulation, evaluator=evaluator, context=context)


def run_experiment(
    prepared: PreparedExperiment,
    *,
    on_evaluation: Callable[[int, int], None] | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> PipelineOutcome:
    """Simulate, then evaluate. A spent budget stops the run with status ``budget_exceeded`` (finished work kept);
    Ctrl-C marks it ``interrupted`` and re-raises KeyboardInterrupt. ``--resume`` continues either stage.
    ``on_evaluation(total, done)`` is told when scoring starts (see evaluate_store)."""
    store, evaluator = prepared.store, prepared.evaluator
    metrics = evaluator.score_names
    try:
        try:
            simulated = run_simulation(prepared.simulation)  # marks the manifest, closes the simulation's models
        except BaseException:
            asyncio.run(evaluator.judge.aclose())  # the judge never ran: nothing else to record
            raise
        if simulated.status != "finished":
            asyncio.run(evaluator.judge.aclose())
            return PipelineOutcome(
                simulated.status, "simulation", store, simulated, error=simulated.error, metrics=metrics
            )
        try:
            # the run is not finished until it is scored; "running" until then, so `runs list` does not mislead
            # (inside the try: an interrupt right here must not leave it "running")
            RunRecorder(store).start()
            result = asyncio.run(evaluate_store(evaluator, store, on_start=on_evaluation, on_score=on_score))
        except BudgetExceeded as exc:
            error = f"budget exceeded while scoring: {exc}"
            RunRecorder(store).finish("budget_exceeded", error)
            return PipelineOutcome("budget_exceeded", "evaluation", store, simulated, error=error, metrics=metrics)
        except KeyboardInterrupt:
            RunRecorder(store).finish("interrupted")
            raise
        except Exception as exc:
            RunRecorder(store).finish("failed", f"{type(exc).__name__}: {exc}")
            raise
        RunRecorder(store).finish("finished")
        return PipelineOutcome("finished", "evaluation", store, simulated, result, metrics=metrics)
    finally:
        prepared.context.close()
