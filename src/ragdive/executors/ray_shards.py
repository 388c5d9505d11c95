"""``ragdive run --executor ray --shards N``: one large run split among Ray workers, still one run directory.

The conversations are split into N disjoint parts (conversation i goes to part i mod N: ``simulation.Shard``).
Each part runs the ordinary pipeline (simulate, judging while simulating) in a worker (``RunWorker.run_shard``),
seeded with the driver's manifest and that part's lines only, so a resumed run redoes exactly what is missing and
no part scores another's conversations. As for a sweep on Ray, only this process (the driver) writes the run
directory: every poll it appends what the workers wrote (one appender per file for all parts), and the run
recorder stays the one writer of status and totals: counts are recounted from the files, and each part's spend
(what its worker's manifest grew by since it was seeded) is added by a recorder of that part, so no call is counted
twice or lost across a resume.

At most one part per CPU of the cluster runs at once (a worker holds a CPU; the other parts wait for a free worker),
and limits are static shares, as for a sweep's runs on Ray: with K parts at once each gets ``1/K`` of every model's
``max_concurrency`` and ``requests_per_minute``, of ``simulation.concurrency`` (the most requests the target gets
at once stays the config's) and of ``evaluation.concurrency``, and ``1/N`` of the budget left when the run started
(or resumed). A part that finishes early does not lend its share, of limits or of budget, to the others.

The run ends ``failed`` when a part failed (its worker died, or its pipeline failed: the other parts go on to their
end first), ``budget_exceeded`` when a part spent its share, ``interrupted`` on cancellation, else ``finished``;
``--resume`` continues it, with any number of parts or locally."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig
from ..errors import WorkerFailed
from ..pipeline import PipelineOutcome, PreparedExperiment
from ..records import RunManifest, Score, Totals
from ..simulation import RunObserver, RunOutcome, Shard
from ..store import RunRecorder
from ..store.mirror import RunBatch, RunMirror, SpendMirror, run_files
from ..store.session import Ending, RunSession
from . import check_executor
from .ray import RayExecutor, _ray, ray_error, worker_share
from .ray_inputs import absolute_inputs
from .ray_worker import ShardOrder

ENDINGS = ("failed", "budget_exceeded", "interrupted")
"""How a split run ends when its parts ended differently: the first of these any part reached, else finished."""


def shard_config(
    config: ExperimentConfig, shards: int, at_once: int, run_start: Totals, seeded: Totals
) -> ExperimentConfig:
    """One part's config: its share (among the ``at_once`` parts running together) of every model's limits and of
    both concurrencies, and 1/``shards`` of the budget left when the run (this session of it) started. The
    worker checks its budget against the totals it was seeded with (``seeded``: the run's, with what the parts
    before it spent) plus its own spend, so its limit is ``seeded``'s spend plus its share."""
    share = worker_share(config, at_once)
    simulation = share.simulation.model_copy(update={"concurrency": max(1, config.simulation.concurrency // at_once)})
    evaluation = share.evaluation.model_copy(update={"concurrency": max(1, config.evaluation.concurrency // at_once)})
    budget = config.budget
    changes: dict[str, Any] = {}
    if budget.max_tokens is not None:
        left = budget.max_tokens - _tokens(run_start)
        changes["max_tokens"] = _tokens(seeded) + max(1, left // shards)
    if budget.max_cost_usd is not None:
        left_usd = budget.max_cost_usd - (run_start.cost_usd or 0.0)
        changes["max_cost_usd"] = (seeded.cost_usd or 0.0) + max(1e-9, left_usd / shards)
    return share.model_copy(
        update={"simulation": simulation, "evaluation": evaluation, "budget": budget.model_copy(update=changes)}
    )


def _tokens(totals: Totals) -> int:
    return (totals.prompt_tokens or 0) + (totals.completion_tokens or 0)


@dataclass
class _Part:
    shard: Shard
    status: str = "running"
    error: str | None = None


async def run_sharded(
    config: ExperimentConfig,
    prepared: PreparedExperiment,
    executor: RayExecutor,
    shards: int,
    *,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    observer: RunObserver | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> PipelineOutcome:
    """Run ``prepared`` (``config``'s run, created or reopened by prepare_experiment) as ``shards`` parts on Ray
    workers. A part that failed raises WorkerFailed once every part has ended (the run's manifest says
    ``failed``); a spent budget returns ``budget_exceeded``; cancellation marks the run ``interrupted``.
    ``observer`` and ``on_score`` hear of the records as the driver writes them (every poll, not every call)."""
    check_executor("ray", None, shards)
    store = prepared.store
    plans = prepared.simulation.runner.plans
    recorder = RunRecorder(store)
    spent = SpendMirror(recorder)  # every part's worker spend, journaled here and added by the run's one recorder
    session = RunSession(store, recorder=recorder, spend=spent.snapshot)
    started = session.start()
    parts = [_Part(Shard(k, shards)) for k in range(shards)]
    totals = [started.totals]  # the latest the recorders wrote, for the observer
    if observer is not None:
        observer.started(len(plans), started.totals.conversations, started.totals)

    def heard(batch: RunBatch) -> None:
        if observer is not None:
            for rejection in batch.rejections:
                observer.rejection(rejection)
            for conversation in batch.conversations:
                for turn in conversation.turns:
                    observer.turn(conversation.id, turn)
                observer.conversation(conversation, totals[0])
        if on_score is not None:
            for score in batch.scores:
                on_score(score)

    cache = None if no_cache or not config.cache.enabled else str(Path(cache_dir or config.cache.dir).resolve())

    async def run_part(part: _Part) -> None:
        ids = {plan.id for plan in plans if part.shard.holds(plan.index)}
        files = run_files(store.path, ids)
        seeded_totals = RunManifest.model_validate_json(files["manifest.json"]).totals

        def add_spend(manifest: dict[str, Any]) -> None:
            limits = RunManifest.model_validate(manifest).totals.limits
            totals[0] = session.recorder.record(spend=spent.snapshot(), limits=limits).totals

        order = ShardOrder(
            config=absolute_inputs(shard_config(config, shards, executor.concurrency, started.totals, seeded_totals)),
            shard=part.shard,
            run_id=store.path.name,
            files=files,
            no_cache=cache is None,
            cache_dir=cache,
            inputs=executor.shipped([absolute_inputs(config)]),
        )
        try:
            mirror = RunMirror.part(store, spent, add_spend)

            def apply(batch: RunBatch) -> None:
                mirror.apply(batch)
                heard(batch)

            part.status, part.error = await executor.call("run_shard", order, apply)
        except _ray().exceptions.RayError as exc:  # the worker died: the other parts go on, the run ends failed
            part.status, part.error = "failed", ray_error(exc)

    async def all_parts() -> Ending:
        # at most executor.concurrency parts at once: a part waits for a free worker, never for a CPU Ray lacks
        await executor.run_all([functools.partial(run_part, part) for part in parts])
        status = next((end for end in ENDINGS if any(p.status == end for p in parts)), "finished")
        ended = [p for p in parts if p.status != "finished"]
        errors = [f"part {p.shard.index + 1} of {shards}: {p.error or p.status}" for p in ended]
        if status == "interrupted":  # a part was stopped while the driver was not: a failure of that part
            status = "failed"
        return Ending(status, "; ".join(errors) or None)

    ending = await session.run(all_parts)
    status, error = ending.status, ending.error
    assert session.manifest is not None
    manifest = session.manifest
    if status == "failed":
        raise WorkerFailed(f"{store.path.name} failed: {error} (finished work is kept; --resume continues it)")
    simulated = RunOutcome(status=status, totals=manifest.totals, error=error)
    return PipelineOutcome(status, "evaluation", store, simulated, error=error, metrics=prepared.evaluator.score_names)
