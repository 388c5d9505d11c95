"""The worker side of the Ray executor: one actor per planned run, or per part of a run split among workers.

The actor runs the ordinary pipeline (``run_here``, the LocalExecutor's code) in a scratch directory of its own,
seeded with the driver's files of that run when it is resumed. It never writes the sweep directory: the driver
asks ``drain`` every poll interval for the records appended since (a ``RunBatch``) and appends them itself, and
``run`` returns the last batch with the run's status. Inputs (corpus, reference index folder, persona files) come
with the order through the object store and are written to the scratch directory where the node lacks the
driver's paths (ray_inputs); the static arm's dataset is sent with the order."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig
from ..errors import RagdiveError
from ..models import ModelContext
from ..pipeline import RunOptions, hold_context, prepare_experiment, run_experiment
from ..pipeline.sweep import run_here
from ..pipeline.sweep_plan import PlannedRun, SweepPlan
from ..simulation import Shard
from ..store.mirror import RunBatch, RunTail
from .ray_inputs import ShippedInputs, localize, relocated_files

SCRATCH_PREFIX = "ragdive-ray-"


async def _inputs(ref: Any) -> ShippedInputs | None:
    """The shipped inputs behind an order's object ref (fetched once per node by Ray), or None."""
    if ref is None:
        return None
    inputs: ShippedInputs = await ref  # awaited: a blocking get would stall this actor's drains
    return inputs


def _cache_dir(driver_dir: str | None, scratch: Path) -> str | None:
    """The driver's model-call cache where this node has it; on another node a cache of this run's own (its
    entries would not come back to the driver)."""
    if driver_dir is None or os.path.isdir(driver_dir):
        return driver_dir
    return str(scratch / "cache")


def _remove_orphans() -> None:
    """Scratch directories of workers that were killed mid-run (a cancelled sweep kills its workers, which then
    cannot clean up): removed by the next worker on that node. Named by the worker's pid, so a live one's stays."""
    for path in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = path.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class RunOrder:
    """Everything a worker needs for one run, sent by value (pickled by Ray)."""

    planned: PlannedRun
    """With its models' limits already cut to this worker's share (see ray.worker_share)."""
    plan: SweepPlan
    files: dict[str, bytes]
    """The driver's files of this run (resume); empty for a new run."""
    static_dataset: tuple[str, bytes] | None
    """The static arm's dataset: file name (its suffix says the format) and content."""
    no_cache: bool
    cache_dir: str | None
    inputs: Any = None
    """The driver's input files (an object ref to ray_inputs.ShippedInputs), for a node without its paths."""


@dataclass
class ShardOrder:
    """One part of a run split among workers (see ray_shards), sent by value."""

    config: ExperimentConfig
    """With this part's share of every limit and of the budget (see ray_shards.shard_config)."""
    shard: Shard
    run_id: str
    files: dict[str, bytes]
    """The driver's manifest and the lines of this part's conversations."""
    no_cache: bool
    cache_dir: str | None
    inputs: Any = None
    """As RunOrder.inputs."""


class RunWorker:
    """Async actor (its methods share one event loop, so ``drain`` is answered while ``run`` awaits models). The
    driver keeps a pool of them and hands each one run after another: a worker process and its imports are paid
    once per sweep, not once per run."""

    def __init__(self) -> None:
        self._tail: RunTail | None = None
        self._leftover = RunBatch()
        """What the last run appended after the driver's last drain, when that run was cancelled: its final
        records and manifest (status, the judge's spend) are written as the cancellation unwinds, and the driver's
        last ``drain`` takes them."""

    async def run(self, order: RunOrder) -> tuple[str, str | None, RunBatch]:
        async def work(scratch: Path, root: Path, config: ExperimentConfig) -> tuple[str, str | None]:
            dataset = None
            if order.static_dataset is not None:
                name, data = order.static_dataset
                dataset = scratch / name
                dataset.write_bytes(data)
            shared = ModelContext.from_config(
                order.plan.baseline.config, no_cache=order.no_cache, cache_dir=_cache_dir(order.cache_dir, scratch)
            )
            cell = order.planned.cell
            planned = PlannedRun(dataclasses.replace(cell, config=config), order.planned.repeat)
            try:
                return await run_here(planned, order.plan, shared, dataset, root)
            finally:
                shared.close()

        run = order.planned
        return await self._in_scratch(run.run_id, order.files, run.cell.config, order.inputs, work)

    async def run_shard(self, order: ShardOrder) -> tuple[str, str | None, RunBatch]:
        """One part of a run's conversations: simulated and scored here, from the driver's lines of that part."""

        async def work(scratch: Path, root: Path, config: ExperimentConfig) -> tuple[str, str | None]:
            run = root / order.run_id
            try:
                async with AsyncExitStack() as resources:
                    context = hold_context(
                        resources,
                        ModelContext.from_config(
                            config, no_cache=order.no_cache, cache_dir=_cache_dir(order.cache_dir, scratch)
                        ),
                    )
                    options = RunOptions(resume=run, context=context, shard=order.shard)
                    prepared = await prepare_experiment(config, resources, options)
                    outcome = await run_experiment(prepared)
                    return outcome.status, outcome.error
            except RagdiveError as exc:  # this part failed, also before its session began: the run ends failed
                return "failed", str(exc)

        return await self._in_scratch(order.run_id, order.files, order.config, order.inputs, work)

    async def _in_scratch(
        self,
        run_id: str,
        files: dict[str, bytes],
        config: ExperimentConfig,
        inputs: Any,
        work: Callable[[Path, Path, ExperimentConfig], Awaitable[tuple[str, str | None]]],
    ) -> tuple[str, str | None, RunBatch]:
        """``work(scratch, runs_root, config)`` on a scratch copy of the driver's files of the run, whose new
        records ``drain`` hands over as they are written, with ``config``'s inputs where this node has them
        (ray_inputs); returns its status and error with the last of them."""
        _remove_orphans()
        scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        root = scratch / "runs"
        root.mkdir()
        config, moved = localize(config, await _inputs(inputs), scratch)
        tail = RunTail(root / run_id)
        if files:
            tail.seed(relocated_files(files, moved))
        self._tail = tail
        try:
            status, error = await work(scratch, root, config)
        finally:  # also on cancellation (ray.cancel): the run has written how it ended; keep that for the driver
            self._leftover = tail.read()
            self._tail = None  # a drain that races this return finds the leftover, not a removed folder
            shutil.rmtree(scratch, ignore_errors=True)  # what it held is in the leftover and the batches before
        last, self._leftover = self._leftover, RunBatch()
        return status, error, last

    async def drain(self) -> RunBatch:
        if self._tail is not None:
            return self._tail.read()
        last, self._leftover = self._leftover, RunBatch()
        return last
