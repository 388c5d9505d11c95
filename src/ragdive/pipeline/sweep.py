"""Run a sweep: every cell's repeats (and its static-arm run) as ordinary run directories under ``DIR/runs/``,
indexed in ``DIR/sweep.json``, then the tables.

Resumable at any point: a run whose manifest says ``finished`` is skipped, any other run that has a directory is
resumed through the run's own resume logic (finished conversations and scored items are never redone), a planned
run without one is created under its planned id. Shared across runs: one model-call cache and one limiter per
model endpoint (ModelContext.for_run), and the reference RAG's persisted index, which every cell with the same
corpus and chunking opens instead of building again. Runs go through an executor, so a distributed one can
replace the LocalExecutor without touching the rest."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..analysis import RunScores
from ..analysis.arrows import ArrowRule
from ..analysis.pass_k import thresholds_from_config
from ..analysis.sweep_tables import CellRuns, build_tables, tables_csv
from ..config.sweep import SweepConfig
from ..errors import ConfigError, RagdiveError
from ..evaluation.metrics import all_metrics, configured_metrics
from ..evaluation.static import load_static_dataset
from ..models import ModelContext
from ..records.sweep import SweepCellEntry, SweepRunEntry
from ..store import RunStore, SweepStore
from .experiment import prepare_experiment, run_experiment
from .launch import RunOptions
from .static import run_static, static_metrics
from .sweep_plan import PlannedRun, SweepPlan, estimate_calls

T = TypeVar("T")


@dataclass
class RunJob:
    """One planned run, with what running it needs: handed to the executor, which runs it here (LocalExecutor) or
    elsewhere (ragdive.executors.ray)."""

    planned: PlannedRun
    store: SweepStore
    shared: ModelContext
    plan: SweepPlan
    static_dataset: Path | None

    async def run_here(self) -> tuple[str, str | None]:
        """This run in this process, under the sweep's runs/ (created, or resumed when its directory is there)."""
        return await run_here(self.planned, self.plan, self.shared, self.static_dataset, self.store.runs_root)


class SweepExecutor(Protocol):
    """What a sweep needs of an executor (ragdive.executors.base.Executor is the public one): ``run_all`` decides
    how many of its jobs (coroutine factories) run at once, ``run`` where one planned run runs (its status and error
    as the run's manifest says)."""

    async def run_all(self, jobs: Sequence[Callable[[], Awaitable[T]]]) -> list[T]: ...

    async def run(self, job: RunJob) -> tuple[str, str | None]: ...


class LocalExecutor:
    """The sweep's default when no executor is given (a call from below the API): jobs in this event loop, at most
    ``concurrency`` at a time. A job that raises cancels the others (each run marks itself interrupted), then the
    error reaches the caller."""

    def __init__(self, concurrency: int = 1) -> None:
        self.concurrency = concurrency

    async def run_all(self, jobs: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        gate = asyncio.Semaphore(self.concurrency)

        async def gated(job: Callable[[], Awaitable[T]]) -> T:
            async with gate:
                return await job()

        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(gated(job)) for job in jobs]
        except BaseExceptionGroup as failed:  # the first error as itself: the CLI shows a ConfigError as one line
            raise failed.exceptions[0] from None
        return [t.result() for t in tasks]

    async def run(self, job: RunJob) -> tuple[str, str | None]:
        return await job.run_here()


@dataclass
class SweepHooks:
    on_start: Callable[[PlannedRun, str], None] | None = None
    """A run begins: "new" or "resumed" (skipped runs are not started)."""
    on_end: Callable[[PlannedRun, str, str | None], None] | None = None
    """A run ended (or was skipped as finished): its status and error."""


@dataclass
class SweepOutcome:
    store: SweepStore
    plan: SweepPlan
    status: str
    statuses: dict[str, str] = field(default_factory=dict)
    """Run id -> status."""
    errors: dict[str, str] = field(default_factory=dict)
    tables: dict[str, Any] | None = None
    table_files: list[Path] = field(default_factory=list)


def sweep_entries(plan: SweepPlan) -> list[SweepCellEntry]:
    runs = plan.runs
    return [
        SweepCellEntry(
            cell=cell.id,
            axes=cell.axes,
            runs=[SweepRunEntry(run_id=r.run_id, repeat=r.repeat) for r in runs if r.cell is cell],  # type: ignore[arg-type]
        )
        for cell in plan.cells
    ]


def open_sweep(plan: SweepPlan, directory: Path, *, resume: bool) -> SweepStore:
    """The sweep directory: created, or (``resume``) reopened after checking it holds this same sweep."""
    config = plan.sweep.model_dump(mode="json")
    if not resume:
        store = SweepStore.create(
            directory,
            name=_name(plan.sweep, directory),
            config=config,
            baseline=plan.baseline.id,
            cells=sweep_entries(plan),
        )
        store.hold_lock()  # held until the caller's release_lock or the process's end
        return store
    store = SweepStore.open(directory)
    store.hold_lock()  # before anything is read for writing: a second `sweep --resume` is refused here
    try:
        _check_same_sweep(plan, store, directory)
    except BaseException:
        store.release_lock()
        raise
    return store


def _check_same_sweep(plan: SweepPlan, store: SweepStore, directory: Path) -> None:
    index = store.read()
    stored = {(c.cell, r.run_id) for c in index.cells for r in c.runs}
    planned = {(r.cell.id, r.run_id) for r in plan.runs}
    if stored != planned:
        raise ConfigError(
            f"{directory} holds another sweep (its cells and runs differ from this config's); "
            "resume it with the config it was started with, or choose another -o"
        )


def _name(sweep: SweepConfig, directory: Path) -> str:
    return sweep.name or directory.name


async def _run_one(
    planned: PlannedRun,
    store: SweepStore,
    shared: ModelContext,
    plan: SweepPlan,
    static_dataset: Path | None,
    hooks: SweepHooks,
    executor: SweepExecutor,
) -> tuple[str, str | None]:
    existing = store.existing_run(planned.run_id)
    if existing is not None and existing.read_manifest().status == "finished":
        return "finished", None
    store.record_run(planned.run_id, "running")  # sweep.json shows what is under way, not only what ended
    if hooks.on_start:
        hooks.on_start(planned, "resumed" if existing else "new")
    return await executor.run(RunJob(planned, store, shared, plan, static_dataset))


async def run_here(
    planned: PlannedRun, plan: SweepPlan, shared: ModelContext, static_dataset: Path | None, root: Path
) -> tuple[str, str | None]:
    """One planned run in this process, created (or resumed, when its directory is there) under ``root``: the
    sweep's runs/ for the LocalExecutor, a worker's scratch directory for the Ray executor."""
    existing = (root / planned.run_id / "manifest.json").is_file()
    config = planned.config()
    resume = root / planned.run_id if existing else None
    try:
        async with AsyncExitStack() as resources:
            context = shared.for_run(config)
            if planned.static:
                arm = plan.sweep.static
                assert arm is not None and static_dataset is not None
                await run_static(
                    config,
                    static_dataset,
                    resources,
                    metrics=",".join(arm.metrics) if arm.metrics else None,
                    limit=arm.limit,
                    per_document=arm.per_document,
                    output=root,
                    context=context,
                    run_id=planned.run_id,
                    resume=resume,
                )
            else:
                options = RunOptions(resume=resume, output=root, context=context, run_id=planned.run_id)
                prepared = await prepare_experiment(config, resources, options)
                await run_experiment(prepared)
    except RagdiveError as exc:  # this run failed (its manifest says so); the sweep goes on with the others
        return _status_at(root, planned), str(exc)
    return _status_at(root, planned), None


def _status_at(root: Path, planned: PlannedRun) -> str:
    manifest = root / planned.run_id / "manifest.json"
    return RunStore(manifest.parent).read_manifest().status if manifest.is_file() else "planned"


async def run_sweep(
    plan: SweepPlan,
    store: SweepStore,
    *,
    static_dataset: Path | None = None,
    executor: SweepExecutor | None = None,
    hooks: SweepHooks | None = None,
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    arrow: ArrowRule | None = None,
) -> SweepOutcome:
    """Every planned run to its end (or resumed to it), each recorded in sweep.json as it ends; then the tables,
    written beside sweep.json. Cancellation marks the sweep ``interrupted`` and re-raises."""
    hooks = hooks or SweepHooks()
    executor = executor or LocalExecutor(plan.sweep.concurrency)
    if plan.sweep.static is not None:
        if static_dataset is None:
            raise ConfigError("the sweep has a static arm but no dataset path was resolved")
        check_static_arm(plan, static_dataset)
    outcome = SweepOutcome(store, plan, "running")
    store.set_status("running")
    shared = ModelContext.from_config(plan.baseline.config, no_cache=no_cache, cache_dir=cache_dir)

    def job(planned: PlannedRun) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            status, error = await _run_one(planned, store, shared, plan, static_dataset, hooks, executor)
            store.record_run(planned.run_id, status)
            outcome.statuses[planned.run_id] = status
            if error:
                outcome.errors[planned.run_id] = error
            if hooks.on_end:
                hooks.on_end(planned, status, error)

        return go

    try:
        await executor.run_all([job(r) for r in plan.runs])
    except (asyncio.CancelledError, KeyboardInterrupt):
        store.set_status("interrupted")
        raise
    except BaseException:
        store.set_status("failed")
        raise
    finally:
        shared.close()
    statuses = set(outcome.statuses.values())
    if statuses <= {"finished"}:
        outcome.status = "finished"
    elif statuses <= {"finished", "incomplete"}:
        outcome.status = "incomplete"  # every run ran to its end; some with conversations in error or judge failures
    else:
        outcome.status = "budget_exceeded" if "budget_exceeded" in statuses else "failed"
    store.set_status(outcome.status)
    outcome.tables = sweep_tables(plan, store, arrow=arrow)
    outcome.table_files = store.write_tables(outcome.tables, tables_csv(outcome.tables))
    return outcome


def sweep_tables(plan: SweepPlan, store: SweepStore, *, arrow: ArrowRule | None = None) -> dict[str, Any]:
    """Tables 2, 4 (and 5 with a static arm) from the finished runs on disk: only the store is read."""
    cells = {c.id: CellRuns(c.id, c.axes) for c in plan.cells}
    for planned in plan.runs:
        run = store.existing_run(planned.run_id)
        if run is None or run.read_manifest().status not in ("finished", "incomplete"):
            continue  # an unfinished run is not a repeat yet; its cell's n says how many are (an incomplete one
            # ran to its end: its means are over its finished conversations and scored items, said by its report)
        scores = RunScores.from_store(run)
        if planned.static:
            cells[planned.cell.id].static = (planned.run_id, scores)
        else:
            cells[planned.cell.id].runs.append((planned.run_id, scores))
    directions = {m.name: m.direction for m in all_metrics()}
    name = store.read().name
    # one threshold set for every cell (the baseline's), so the cells' pass^k curves answer the same question
    thresholds = thresholds_from_config(plan.baseline.config.model_dump(mode="json"))
    return build_tables(
        name, list(cells.values()), plan.baseline.id, directions=directions, rule=arrow, thresholds=thresholds
    )


def check_static_arm(plan: SweepPlan, dataset: Path) -> None:
    """The static arm's dataset readable and its metrics single-turn for every cell: found before any run, not in
    every static run after the dynamic ones have spent their calls."""
    arm = plan.sweep.static
    assert arm is not None
    load_static_dataset(dataset, limit=arm.limit)
    for cell in plan.cells:
        static_metrics(cell.config, ",".join(arm.metrics) if arm.metrics else None)


def static_dataset_path(plan: SweepPlan, sweep_file: Path | None) -> Path | None:
    """The static arm's dataset (relative to the sweep file), checked with its metrics (check_static_arm)."""
    sweep = plan.sweep
    if sweep.static is None:
        return None
    path = Path(sweep.static.dataset)
    if not path.is_absolute() and sweep_file is not None:
        path = sweep_file.parent / path
    if not path.is_file():
        raise ConfigError(f"static.dataset: {path} does not exist")
    check_static_arm(plan, path)
    return path


def estimate_sweep_calls(plan: SweepPlan, static_dataset: Path | None) -> dict[str, tuple[int, int]]:
    """The model calls a sweep would make, per role (fewest, most): what `--dry-run` shows."""
    from ..evaluation.static import sample_per_document
    from ..simulation import seed_documents

    config = plan.baseline.config
    turn = configured_metrics(config.evaluation, kind="turn")
    every = configured_metrics(config.evaluation)
    items = 0
    if static_dataset is not None and plan.sweep.static is not None:
        questions = load_static_dataset(static_dataset, limit=plan.sweep.static.limit)
        if plan.sweep.static.per_document is not None:
            seeds = [(d.id, d.title) for d in seed_documents(config)]
            questions = sample_per_document(questions, seeds, plan.sweep.static.per_document, seed=config.seed)
        items = len(questions)
    return estimate_calls(plan, turn_metrics=len(turn), conversation_metrics=len(every) - len(turn), static_items=items)
