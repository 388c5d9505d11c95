"""The worker side of the Ray executor: one actor per planned run.

The actor runs the ordinary pipeline (``run_here``, the LocalExecutor's code) in a scratch directory of its own,
seeded with the driver's files of that run when it is resumed. It never writes the sweep directory: the driver
asks ``drain`` every poll interval for the records appended since (a ``RunBatch``) and appends them itself, and
``run`` returns the last batch with the run's status. Inputs (corpus, reference index folder, model-call cache)
are read at the paths the config names, so on a multi-machine cluster they must be readable at those paths on
every node; the static arm's dataset is sent with the order."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..models import ModelContext
from ..pipeline.sweep import run_here
from ..pipeline.sweep_plan import PlannedRun, SweepPlan
from ..store.mirror import RunBatch, RunTail

SCRATCH_PREFIX = "ragdive-ray-"


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
        _remove_orphans()
        scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        root = scratch / "runs"
        root.mkdir()
        tail = RunTail(root / order.planned.run_id)
        if order.files:
            tail.seed(order.files)
        self._tail = tail
        dataset = None
        if order.static_dataset is not None:
            name, data = order.static_dataset
            dataset = scratch / name
            dataset.write_bytes(data)
        shared = ModelContext.from_config(
            order.plan.baseline.config, no_cache=order.no_cache, cache_dir=order.cache_dir
        )
        try:
            status, error = await run_here(order.planned, order.plan, shared, dataset, root)
        finally:  # also on cancellation (ray.cancel): the run has written how it ended; keep that for the driver
            shared.close()
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
