"""``ragdive sweep --executor ray [--address ADDR]``: the sweep's runs as Ray actors, on an existing cluster
(``address``) or on a local instance started here (``ray.init(num_cpus=2)`` by default).

The contract of the local executor holds: only this process (the driver) writes the sweep directory. Each run goes
to a RunWorker actor (ray_worker; a pool of at most ``concurrency``, reused run after run) that works in a scratch
directory of its own; every ``poll_s`` the driver drains the records it appended since and appends them through
ragdive.store (RunMirror), so resume and "nothing lost" hold as for a local run: a record counts once the driver
has fsync'ed it, and a run cut off (driver killed, worker lost) resumes from the driver's copy, redoing at most
what one poll interval had not yet brought back.

Model limits hold cluster-wide by per-worker shares, not by a limiter actor: at most ``runs_at_once`` runs are
under way, each with ``max_concurrency // runs_at_once`` calls in flight per model (and that share of
``requests_per_minute``), where ``runs_at_once`` is the sweep's concurrency capped by the smallest model's
``max_concurrency`` so that every share is at least one call. A share is static: a run that finishes early does
not lend its share to the others (a limiter actor would, at one round trip per call)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..config import ExperimentConfig
from ..config.models import ROLES
from ..errors import ConfigError
from ..pipeline import PipelineOutcome
from ..pipeline.sweep import LocalExecutor, RunJob
from ..pipeline.sweep_plan import PlannedRun, SweepPlan
from ..store.mirror import RunBatch, RunMirror, run_files
from ..store.session import Ending
from .base import Executor, ExecutorRequest, ExperimentJob
from .ray_inputs import absolute_inputs, pack
from .ray_worker import RunOrder, RunWorker

T = TypeVar("T")


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--executor ray needs Ray: pip install 'ragdive[ray]'") from exc
    return ray


def runs_at_once(plan: SweepPlan, concurrency: int) -> int:
    """The sweep's concurrency, capped so that each run's share of every model's max_concurrency is >= 1."""
    smallest = min(
        (spec.max_concurrency for cell in plan.cells for role in ROLES if (spec := cell.config.models.for_role(role))),
        default=concurrency,
    )
    return max(1, min(concurrency, smallest))


def worker_share(config: ExperimentConfig, runs: int) -> ExperimentConfig:
    """The config with every model's limits cut to one of ``runs`` equal shares."""
    models = config.models
    changes = {}
    for role in ("default", *ROLES):
        spec = getattr(models, role)
        if spec is None:
            continue
        rpm = spec.requests_per_minute / runs if spec.requests_per_minute else None
        changes[role] = spec.model_copy(
            update={"max_concurrency": max(1, spec.max_concurrency // runs), "requests_per_minute": rpm}
        )
    return config.model_copy(update={"models": models.model_copy(update=changes)})


def cluster_cpus() -> int:
    """CPUs of the cluster Ray is connected to (at least 1)."""
    return max(1, int(_ray().cluster_resources().get("CPU", 1)))


def open_ray(request: ExecutorRequest) -> RayExecutor:
    """The registered ``ray`` executor (ragdive.executors.EXECUTORS): for a sweep, its runs on a pool of workers;
    else one run split into ``request.shards`` parts (default: one per CPU of the cluster, known once connected)."""
    if request.sweep is not None:
        return RayExecutor.for_plan(request.sweep, address=request.address)
    executor = RayExecutor(address=request.address)
    executor.split, executor.parts = True, request.shards
    return executor


class RayExecutor(Executor):
    def __init__(
        self, concurrency: int = 1, *, address: str | None = None, num_cpus: int | None = 2, poll_s: float = 0.25
    ) -> None:
        super().__init__(ExecutorRequest(address=address))
        self.concurrency = concurrency
        self.address = address
        self.split = False
        """One run split into parts (`run_experiment`), rather than a sweep's runs."""
        self.parts: int | None = None
        """With ``split``: how many parts (None until connected: one per CPU of the cluster)."""
        self._sized = False
        self.num_cpus = num_cpus
        self.poll_s = poll_s
        self._started = False
        self._worker: Any = None
        self._idle: list[Any] = []
        """Workers between runs. At most ``concurrency`` exist: run_all lets no more runs in at once."""
        self._inputs: Any = None
        """The object ref of the input files, once put (shipped)."""

    @classmethod
    def for_plan(cls, plan: SweepPlan, *, address: str | None = None, **options: Any) -> RayExecutor:
        return cls(runs_at_once(plan, plan.sweep.concurrency), address=address, **options)

    # -- the cluster -------------------------------------------------------------------------------------------
    def start(self) -> str:
        """Connect (`connect`); the line saying how the work is spread. Idempotent."""
        self.connect()
        if not self.split:
            return f"ray: {self.concurrency} runs at once, each with its share of every model's limits"
        if not self._sized:  # at most one part per CPU at once: a worker holds a CPU, more would never start
            cpus = cluster_cpus()
            self.parts = self.parts or cpus
            self.concurrency = min(self.parts, cpus)
            self._sized = True
        at_once = self.concurrency
        return f"ray: the run in {self.parts} parts, {at_once} at once, each with 1/{at_once} of every limit"

    def connect(self) -> None:
        """Connect to ``address``, or start a local instance that sees this process's import path (so that
        ``module:function`` responders and targets resolve in workers as they do here). Idempotent."""
        ray = _ray()
        if self._worker is not None:
            return
        if not ray.is_initialized():
            if self.address:
                _check_reachable(self.address)
            try:
                if self.address:
                    ray.init(address=self.address, logging_level=logging.WARNING)
                else:
                    path = os.pathsep.join(p for p in sys.path if p)
                    ray.init(
                        address="local",  # a new instance, never one a `ray start` left behind on this machine
                        num_cpus=self.num_cpus,
                        include_dashboard=False,
                        logging_level=logging.WARNING,
                        runtime_env={"env_vars": {"PYTHONPATH": path}},
                    )
            except ConnectionError as exc:
                raise ConfigError(f"--address {self.address}: no Ray cluster answers there ({exc})") from exc
            self._started = True
        self._worker = ray.remote(num_cpus=1)(RunWorker)

    def close(self) -> None:
        if not self._idle and not self._started:  # nothing here to stop (also when Ray is not installed)
            self._worker = None
            return
        ray = _ray()
        for actor in self._idle:
            ray.kill(actor, no_restart=True)
        self._idle.clear()
        if self._started:
            _ray().shutdown()
            self._started = False
        self._worker = self._inputs = None

    # -- the Executor interface (ragdive.executors.base) --------------------------------------------------------
    async def run_experiment(self, job: ExperimentJob) -> PipelineOutcome:
        """One run in ``parts`` parts on workers (ragdive.executors.ray_shards)."""
        from .ray_shards import run_sharded

        self.split = True
        self.start()
        assert self.parts is not None
        if job.on_scoring is not None:
            job.on_scoring(None, len(job.prepared.store.current_scores()))  # the total grows as parts go
        return await run_sharded(
            job.config,
            job.prepared,
            self,
            self.parts,
            no_cache=job.options.no_cache,
            cache_dir=job.options.cache_dir,
            observer=job.options.observer,
            on_score=job.on_score,
        )

    async def run_all(self, jobs: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        self.connect()
        return await LocalExecutor(self.concurrency).run_all(jobs)

    async def run(self, job: RunJob) -> tuple[str, str | None]:
        ray = _ray()
        self.connect()
        mirror = RunMirror(job.store.run_path(job.planned.run_id))
        try:
            status, error = await self.call("run", self._order(job), mirror.apply)
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            mirror.end(raised=exc)  # also when cancelled again while salvaging: never left "running"
            raise
        except ray.exceptions.RayError as exc:  # the worker died or its code broke outside the run's own handling
            error = ray_error(exc)
            mirror.end(Ending("failed", error))
            return "failed", error
        mirror.end(Ending(status, error))  # the driver's copy ends as the worker's run did
        return status, error

    async def call(self, method: str, order: Any, apply: Callable[[RunBatch], None]) -> tuple[str, str | None]:
        """``RunWorker.<method>(order)`` on a worker of the pool: its records handed to ``apply`` every poll_s as
        they are written, then its status and error. On cancellation the worker's run is cancelled too and what
        it wrote as it unwound is applied (within 2 s) before CancelledError goes on; a RayError (the worker died)
        goes to the caller. A worker that did not end cleanly is killed, never handed another order."""
        self.connect()
        actor = self._idle.pop() if self._idle else self._worker.remote()
        healthy = False
        ref = getattr(actor, method).remote(order)
        result = asyncio.wrap_future(ref.future())
        try:
            while True:
                done, _ = await asyncio.wait({result}, timeout=self.poll_s)
                if done:
                    break
                apply(await actor.drain.remote())
            status, error, last = result.result()
            apply(last)
            healthy = True
            return status, error
        except (asyncio.CancelledError, KeyboardInterrupt):
            _ray().cancel(ref)  # an async actor's task is cancelled as a local run is: it writes how it ended
            await _salvage(actor, apply, result)
            raise
        finally:
            if healthy:
                self._idle.append(actor)
            else:  # cut off or broken
                _ray().kill(actor, no_restart=True)
                # a dead worker fails its drain and its order alike: the order's error is the drain's, known
                result.add_done_callback(_retrieve)

    def shipped(self, configs: list[ExperimentConfig]) -> Any:
        """The object ref of ``configs``' input files (ray_inputs), packed and put once per executor: a worker on a
        node without the driver's paths writes them to its scratch directory."""
        if self._inputs is None:
            self._inputs = _ray().put(pack(configs))
        return self._inputs

    def _order(self, job: RunJob) -> RunOrder:
        config = absolute_inputs(worker_share(job.planned.cell.config, self.concurrency))
        cell = dataclasses.replace(job.planned.cell, config=config)
        planned = PlannedRun(cell, job.planned.repeat)
        static = None
        if job.planned.static and job.static_dataset is not None:
            static = (job.static_dataset.name, job.static_dataset.read_bytes())
        cache = job.shared.cache
        return RunOrder(
            planned=planned,
            plan=job.plan,
            files=run_files(job.store.run_path(planned.run_id)),
            static_dataset=static,
            no_cache=cache is None,
            cache_dir=str(Path(cache.directory).resolve()) if cache is not None else None,
            inputs=self.shipped([absolute_inputs(c.config) for c in job.plan.cells]),
        )


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved, so asyncio does not log it as "never retrieved"


def ray_error(exc: BaseException) -> str:
    return f"ray worker: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


async def _salvage(
    actor: Any, apply: Callable[[RunBatch], None], result: asyncio.Future[Any], timeout_s: float = 2.0
) -> None:
    """On cancellation, once the worker's cancelled run has unwound (its scores drained, the judge's spend and its
    status in its manifest) or ``timeout_s`` passed: what the worker wrote since the last poll. A Ctrl-C then
    costs no finished record and no recorded spend. Anything going wrong here only costs those records (redone on
    --resume) and that spend."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    await asyncio.wait({result}, timeout=timeout_s)
    if result.done() and not result.cancelled():
        result.exception()  # retrieved: a cancelled task's error is expected here, not "never retrieved"
    try:
        left = max(0.1, deadline - asyncio.get_running_loop().time())
        apply(await asyncio.wait_for(asyncio.wrap_future(actor.drain.remote().future()), left))
    except Exception:  # noqa: BLE001 - the run is being cut off anyway; its driver copy stays consistent
        return


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A HOST:PORT (or ray://HOST:PORT) with nothing listening is one error in seconds: ray.init itself retries
    for minutes before it gives up. ``auto`` and other forms are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConfigError(f"--address {address}: no Ray cluster answers there ({exc.strerror or exc})") from exc
