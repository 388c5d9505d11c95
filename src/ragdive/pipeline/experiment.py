"""An experiment end to end: simulate conversations, then score the same run directory with the judge.

Every role (user, validator, the reference RAG's generator, judge) shares one ModelContext, so the cache, the
usage ledger and the budget cover the whole run. Both stages resume: the simulation skips finished conversations,
the evaluation skips items already in evaluations.jsonl. Everything that needs closing (models, target, cache) is
registered on the caller's AsyncExitStack, so it is closed once, in the command's one event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig
from ..errors import BudgetExceeded, ConfigError
from ..evaluation import Arrivals, EvaluationResult, Evaluator
from ..evaluation.metrics import configured_metrics
from ..models import ModelContext
from ..models.selfcheck import check_local_models
from ..records import Score, Totals
from ..simulation import PreparedRun, RunObserver, RunOutcome, Shard, prepare_run, run_simulation
from ..store import RunRecorder, RunStore
from .building import build_evaluator, hold_context


async def evaluate_store(
    evaluator: Evaluator,
    store: RunStore,
    *,
    retry_failed: bool = False,
    rescore_changed: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> EvaluationResult:
    """Score what is not scored yet. ``on_start(total, done)`` is told how many items the run has and how many
    were already scored, before the first judge call. (Whoever built the evaluator closes its judge.)"""
    await check_local_models(evaluator.judge.local_models)  # once per worker: free after the simulation's check
    return await evaluator.evaluate_run(
        store,
        retry_judge_failures=retry_failed,
        rescore_changed=rescore_changed,
        on_start=on_start,
        on_score=on_score,
    )


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


async def prepare_experiment(
    config: ExperimentConfig,
    resources: AsyncExitStack,
    *,
    resume: Path | None = None,
    output: Path | None = None,
    observer: RunObserver | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    context: ModelContext | None = None,
    run_id: str | None = None,
    shard: Shard | None = None,
) -> PreparedExperiment:
    """Check the config (the judge too: a missing judge must not be found after the simulation spent money),
    build every model on one shared context, then create or reopen the run. Whatever is built is closed with
    ``resources``, also when a later check fails. A sweep passes its shared ``context`` (closed by the sweep) and
    the ``run_id`` it planned; a worker of a distributed run its ``shard`` of the conversations."""
    if config.models.for_role("judge") is None:
        raise ConfigError("no judge model: set models.judge (or models.default), or pass --model judge=provider/model")
    if context is None:
        context = hold_context(resources, ModelContext.from_config(config, no_cache=no_cache, cache_dir=cache_dir))
    metrics = configured_metrics(config.evaluation.metrics)
    evaluator = build_evaluator(
        config, [], metrics, config.evaluation.concurrency, resources=resources, context=context
    )
    simulation = await prepare_run(
        config, resources, resume=resume, output=output, observer=observer, context=context, run_id=run_id, shard=shard
    )
    simulation.check_also.extend(evaluator.judge.local_models)
    return PreparedExperiment(simulation=simulation, evaluator=evaluator, context=context)


async def run_experiment(
    prepared: PreparedExperiment,
    *,
    on_evaluation: Callable[[int, int], None] | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> PipelineOutcome:
    """Simulate and evaluate at once: each turn is judged as soon as the target answered it and each conversation's
    multi-turn metrics as soon as its line is on disk, while the rest is still being simulated, so the run takes
    about as long as the longer of the two, not their sum (the judge's calls fill the simulation's waits, and only
    the last turn's judge round is left when the last conversation ends). Scores are written only once their
    conversation's line is (stamped with it), so a conversation the run drops leaves no scores behind. Both stages
    resume as before: a conversation on disk and not yet scored is scored on resume. A spent budget stops the run
    with status ``budget_exceeded`` (finished work kept); cancellation (Ctrl-C, SIGTERM) marks it ``interrupted``
    and re-raises. ``on_evaluation(total, done)`` is told when scoring starts; the total counts the conversations
    still to simulate at their full length."""
    store, evaluator, runner = prepared.store, prepared.evaluator, prepared.simulation.runner
    metrics = evaluator.score_names
    # the judge's local self-check is the simulation's preflight (check_also): a broken build fails the run there
    redone = {p.id for p in runner.plans} - store.finished_conversation_ids()
    # read before the simulation starts (no await between here and its first write): disk and stream are disjoint
    plan = evaluator.plan_run(store, redone=redone)
    arrivals = Arrivals()
    runner.on_written = arrivals.written
    runner.on_answered = arrivals.answered  # each turn is judged at once (written with its conversation's line)

    async def simulate() -> RunOutcome:
        try:
            return await run_simulation(prepared.simulation)  # marks the manifest
        finally:
            arrivals.close()  # however it ended: the judge scores what arrived, then stops

    expected = len(redone) * evaluator.items_per_conversation(runner.settings.max_turns)
    simulation = asyncio.ensure_future(simulate())
    scoring = asyncio.ensure_future(
        evaluator.score_planned(
            store, plan, incoming=arrivals, expected=expected, on_start=on_evaluation, on_score=on_score
        )
    )
    try:
        simulated = await _simulation_then_scoring(simulation, scoring, store)
        if simulated.status != "finished":
            return PipelineOutcome(
                simulated.status, "simulation", store, simulated, error=simulated.error, metrics=metrics
            )
        result = await scoring
    except BudgetExceeded as exc:
        error = f"budget exceeded while scoring: {exc}"
        RunRecorder(store).finish("budget_exceeded", error)
        return PipelineOutcome(
            "budget_exceeded", "evaluation", store, _outcome(simulation), error=error, metrics=metrics
        )
    except (asyncio.CancelledError, KeyboardInterrupt):
        RunRecorder(store).finish("interrupted")
        raise
    except Exception as exc:
        RunRecorder(store).finish("failed", f"{type(exc).__name__}: {exc}")
        raise
    finally:
        for task in (simulation, scoring):
            task.cancel()
        await asyncio.gather(simulation, scoring, return_exceptions=True)
    RunRecorder(store).finish("finished")
    return PipelineOutcome("finished", "evaluation", store, simulated, result, metrics=metrics)


async def _simulation_then_scoring(
    simulation: asyncio.Future[RunOutcome], scoring: asyncio.Future[EvaluationResult], store: RunStore
) -> RunOutcome:
    """Wait for the simulation; a scoring failure meanwhile (a spent budget, a crashed judge) stops it. A simulation
    that did not finish stops the scoring (what was scored stays written; resume goes on from there)."""
    both: set[asyncio.Future[Any]] = {simulation, scoring}
    await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
    if scoring.done() and scoring.exception() is not None and not simulation.done():
        simulation.cancel()
        await asyncio.gather(simulation, return_exceptions=True)
        scoring.result()  # raises the scoring's error
    simulated = await simulation
    if simulated.status == "finished":
        # the run is not finished until it is scored: "running" until then, so `runs list` does not mislead
        RunRecorder(store).start()
    else:
        scoring.cancel()
        await asyncio.gather(scoring, return_exceptions=True)
    return simulated


def _outcome(simulation: asyncio.Future[RunOutcome]) -> RunOutcome:
    if simulation.done() and not simulation.cancelled() and simulation.exception() is None:
        return simulation.result()
    return RunOutcome(status="interrupted", totals=Totals())
