"""What an executor is: the public interface a registered executor implements (the built-in ``local`` and ``ray``,
or a plug-in's, from the entry-point group ``ragdive.executors``).

An executor is opened once per command (`ExecutorType.open` with the command's `ExecutorRequest`), started before
any run directory exists (`Executor.start`: connect, or fail as one error that leaves nothing behind), then given
the work, and closed at the command's end. The work comes in two forms:

- one prepared run (`ragdive run`, `ragdive.run`): an `ExperimentJob`, handed to `Executor.run_experiment`. The run
  is created (or reopened) and its models, target and judge are built; ``job.options.observer`` hears the
  simulation's progress, ``job.on_scoring``/``job.on_score`` the judge's. ``await job.run_here()`` runs it in this
  event loop under its own run session (ragdive.store.session.RunSession, the one owner of its status); an
  executor that runs it elsewhere opens ``RunSession(job.prepared.store)`` itself and writes records only
  through ragdive.store, as ``ragdive.executors.ray_shards`` does.
- a sweep's runs (`ragdive sweep`): `Executor.run_all` is given one coroutine factory per planned run and decides
  how many go at once; each factory calls `Executor.run` with that run's ragdive.pipeline.sweep.RunJob (its planned
  cell, the sweep's store and shared model context), whose ``await job.run_here()`` runs it here.

The base class is the local executor: everything in this event loop, a sweep's runs ``concurrency`` at a time.
A plug-in overrides what it does differently and inherits the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ..config import ExperimentConfig
from ..records import Score

if TYPE_CHECKING:
    from ..pipeline import PipelineOutcome, PreparedExperiment, RunOptions
    from ..pipeline.sweep import RunJob
    from ..pipeline.sweep_plan import SweepPlan

T = TypeVar("T")


@dataclass(frozen=True)
class ExecutorRequest:
    """What the command asked of its executor: a cluster ``address`` and ``shards`` (parts of one run; both for
    distributed executors only), and the ``sweep`` plan when it runs a sweep (its cells, concurrency and models)."""

    address: str | None = None
    shards: int | None = None
    sweep: SweepPlan | None = None


@dataclass
class ExperimentJob:
    """One run to make, prepared: simulate, then score, into ``prepared.store``."""

    config: ExperimentConfig
    prepared: PreparedExperiment
    options: RunOptions
    """What the run was prepared with: its ``observer`` (told of the simulation's progress), the cache settings."""
    on_scoring: Callable[[int | None, int], None] | None = None
    """Scoring begins: its total (None while unknown) and what was scored before."""
    on_score: Callable[[Score], None] | None = None
    """Each score on disk."""

    async def run_here(self) -> PipelineOutcome:
        """The run in this event loop, to its end, under its run session (the local executor's way)."""
        from ..pipeline import run_experiment

        return await run_experiment(self.prepared, on_evaluation=self.on_scoring, on_score=self.on_score)


class Executor:
    """Where a command's runs run. This base class runs everything here; see the module docstring."""

    def __init__(self, request: ExecutorRequest) -> None:
        self.request = request
        self.concurrency = request.sweep.sweep.concurrency if request.sweep is not None else 1
        """How many of a sweep's runs go at once."""

    def start(self) -> str | None:
        """Connect (or check what running needs) before any run exists; a line worth showing, or None."""
        return None

    async def run_experiment(self, job: ExperimentJob) -> PipelineOutcome:
        """Make one prepared run; its outcome as the run's session ended it."""
        return await job.run_here()

    async def run_all(self, jobs: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """A sweep's runs, at most ``concurrency`` at once in this event loop; one that raises cancels the others."""
        from ..pipeline.sweep import LocalExecutor

        return await LocalExecutor(self.concurrency).run_all(jobs)

    async def run(self, job: RunJob) -> tuple[str, str | None]:
        """One of a sweep's runs; its status and error as its manifest says."""
        return await job.run_here()

    def close(self) -> None:
        """After the command's work, however it ended."""
