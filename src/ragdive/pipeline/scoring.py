"""Scoring a run that already exists (`ragdive evaluate`, `ragdive.evaluate`): the judge settings come from a
config when one is given, else from the run's own manifest; resumable, items already scored are skipped."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from ..config import AlarmsConfig, ExperimentConfig
from ..evaluation import EvaluationResult
from ..models import ModelContext
from ..records import Score
from ..store import RunStore, writer_lock
from ..store.session import RunSession
from .alarms import alarm_fields
from .building import build_evaluator, hold_context, parse_metrics, settings_from_manifest
from .experiment import evaluate_store


@dataclass
class ScoringOutcome:
    store: RunStore
    metrics: list[str]
    """Score names as written to evaluations.jsonl."""
    result: EvaluationResult
    status: str = "finished"
    """The run's status after this scoring, as its session decided it (finished, incomplete with the counts in
    ``error``, or the unfinished status the run had)."""
    error: str | None = None


def scoring_settings(run: Path, config: ExperimentConfig | None = None) -> ExperimentConfig:
    """The judge, metrics, cache and budget settings to score ``run`` with: ``config`` when given, else the run's
    own manifest; the repeat is always the run's own, so the judge's cache keys stay the run's whichever config
    names the judge. The API applies ``--model`` to what this returns."""
    manifest_config = RunStore.open(run).read_manifest().config
    settings = config if config is not None else settings_from_manifest(manifest_config)
    return settings.model_copy(update={"repeat": int(manifest_config.get("repeat") or 0)})


async def score_run(
    run: Path,
    resources: AsyncExitStack,
    settings: ExperimentConfig,
    *,
    alarm_limits: AlarmsConfig | None = None,
    metrics: str | None = None,
    concurrency: int | None = None,
    retry_failed: bool = False,
    rescore_changed: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> ScoringOutcome:
    """Score ``run`` with the judge of ``settings`` (from `scoring_settings`; ``metrics``: ``a,b``).
    ``alarm_limits``: a given config's alarm thresholds (None: the run's own)."""
    store = RunStore.open(run)
    resources.enter_context(writer_lock(store.path))  # one writer per run, for the whole command
    names = parse_metrics(metrics, settings.evaluation)
    concurrency = concurrency or settings.evaluation.concurrency
    context = hold_context(resources, ModelContext.from_config(settings))
    evaluator = build_evaluator(settings, names, concurrency, resources=resources, context=context)
    # one session: the run is "running" while scored; scoring a run whose simulation did not finish keeps its status
    session = RunSession(store, adds_to_run=True, final_fields=lambda: alarm_fields(store, alarm_limits))
    result = await session.run(
        lambda: evaluate_store(
            evaluator,
            store,
            retry_failed=retry_failed,
            rescore_changed=rescore_changed,
            on_start=on_start,
            on_score=on_score,
        )
    )
    assert session.ending is not None
    return ScoringOutcome(store, evaluator.score_names, result, session.ending.status, session.ending.error)
