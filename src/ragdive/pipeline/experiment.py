"""An experiment end to end: simulate conversations, then score the same run directory with the judge.

Every role (user, validator, the reference RAG's generator, judge) shares one ModelContext, so the cache, the
usage ledger and the budget cover the whole run. Both stages resume: the simulation skips finished conversations,
the evaluation skips items already in evaluations.jsonl. Everything that needs closing (models, target, cache) is
registered on the caller's AsyncExitStack, so it is closed once, in the command's one event loop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import Any

from ..config import ExperimentConfig
from ..errors import BudgetExceeded
from ..evaluation import Arrivals, EvaluationResult, Evaluator
from ..evaluation.metrics import configured_metrics
from ..models import ModelContext
from ..models.selfcheck import check_local_models
from ..records import Score, Totals
from ..simulation import RunOutcome
from ..store import RunStore
from ..store.session import RunSession
from .alarms import alarm_fields
from .building import build_evaluator, check_judge, hold_context
from .launch import PreparedRun, RunOptions, prepare_run


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
    """The run's final status as its session wrote it: finished, or budget_exceeded (in either stage)."""
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
    options: RunOptions = RunOptions(),
) -> PreparedExperiment:
    """Check the config (the judge too: a missing judge must not be found after the simulation spent money),
    build every model on one shared context, then create or reopen the run. Whatever is built is closed with
    ``resources``, also when a later check fails. A sweep passes its shared ``context`` (closed by the sweep) and
    the ``run_id`` it planned; a worker of a distributed run its ``shard`` of the conversations."""
    check_judge(config)
    context = options.context
    if context is None:
        context = hold_context(
            resources, ModelContext.from_config(config, no_cache=options.no_cache, cache_dir=options.cache_dir)
        )
    metrics = configured_metrics(config.evaluation)
    evaluator = build_evaluator(config, metrics, config.evaluation.concurrency, resources=resources, context=context)
    simulation = await prepare_run(config, resources, replace(options, context=context))
    simulation.check_also.extend(evaluator.judge.local_models)
    return PreparedExperiment(simulation=simulation, evaluator=evaluator, context=context)


async def run_simulation(prepared: PreparedRun) -> RunOutcome:
    """Simulate only (`ragdive simulate`), in one run session: the run ends ``finished`` or ``budget_exceeded``
    (returned), ``interrupted`` on cancellation or ``failed`` (raised again), with finished conversations on disk."""
    runner = prepared.runner
    session = _session(prepared)
    outcome = await session.run(runner.run)
    return _ended(outcome, session)


def _session(prepared: PreparedRun, final: Callable[[], dict[str, Any]] | None = None) -> RunSession:
    """The run's session, on the simulation's recorder: the spend it recorded is never added twice. ``final``:
    more fields of the final write (a scored run's validity alarms)."""
    runner = prepared.runner
    return RunSession(
        prepared.store,
        recorder=runner.recorder,
        spend=runner.session_spend,
        limits=runner.session_limits,
        final_fields=final,
    )


def _ended(outcome: RunOutcome, session: RunSession) -> RunOutcome:
    assert session.ending is not None and session.manifest is not None
    outcome.status, outcome.error = session.ending.status, session.ending.error
    outcome.totals = session.manifest.totals
    return outcome


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
    resume as before: a conversation on disk and not yet scored is scored on resume. One run session owns the
    status: a spent budget (in either stage) ends the run ``budget_exceeded`` (finished work kept); cancellation
    (Ctrl-C, SIGTERM) ``interrupted`` and a failure ``failed`` (both raised again). ``on_evaluation(total, done)``
    is told when scoring starts; the total counts the conversations still to simulate at their full length."""
    session = _session(prepared.simulation, final=functools.partial(alarm_fields, prepared.store))
    outcome = await session.run(lambda: _simulate_and_score(prepared, on_evaluation, on_score))
    assert session.ending is not None
    outcome.status, outcome.error = session.ending.status, session.ending.error
    return outcome


async def _simulate_and_score(
    prepared: PreparedExperiment,
    on_evaluation: Callable[[int, int], None] | None,
    on_score: Callable[[Score], None] | None,
) -> PipelineOutcome:
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
            return await runner.run()
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
        simulated = await _simulation_then_scoring(simulation, scoring)
        if simulated.status != "finished":
            return PipelineOutcome(
                simulated.status, "simulation", store, simulated, error=simulated.error, metrics=metrics
            )
        result = await scoring
    except BudgetExceeded as exc:
        error = f"budget exceeded while scoring: {exc}"
        return PipelineOutcome(
            "budget_exceeded", "evaluation", store, _outcome(simulation), error=error, metrics=metrics
        )
    finally:  # every task has unwound (and written what it had) before the session writes the final status
        for task in (simulation, scoring):
            task.cancel()
        await asyncio.gather(simulation, scoring, return_exceptions=True)
    return PipelineOutcome("finished", "evaluation", store, simulated, result, metrics=metrics)


async def _simulation_then_scoring(
    simulation: asyncio.Future[RunOutcome], scoring: asyncio.Future[EvaluationResult]
) -> RunOutcome:
    """Wait for the simulation; a scoring failure meanwhile (a spent budget, a crashed judge) stops it. A simulation
    that did not finish stops the scoring (what was scored stays written; resume goes on from there). The run stays
    ``running`` until it is scored, so `runs list` does not mislead."""
    both: set[asyncio.Future[Any]] = {simulation, scoring}
    await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
    if scoring.done() and scoring.exception() is not None and not simulation.done():
        simulation.cancel()
        await asyncio.gather(simulation, return_exceptions=True)
        scoring.result()  # raises the scoring's error
    simulated = await simulation
    if simulated.status != "finished":
        scoring.cancel()
        await asyncio.gather(scoring, return_exceptions=True)
    return simulated


def _outcome(simulation: asyncio.Future[RunOutcome]) -> RunOutcome:
    if simulation.done() and not simulation.cancelled() and simulation.exception() is None:
        return simulation.result()
    return RunOutcome(status="interrupted", totals=Totals())
