"""A sweep (`ragdive sweep`): every cell's repeats (and static arm) as ordinary runs, then the tables; and its
plan without running it (`ragdive sweep --dry-run`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import load_config, validate_config
from .observer import Observer
from .results import SweepResult

if TYPE_CHECKING:
    from ..config.sweep import SweepConfig
    from ..pipeline.sweep_plan import SweepPlan

SweepLike = str | Path | Mapping[str, Any]


@dataclass(frozen=True)
class PlannedSweep:
    """A sweep's plan, as `ragdive sweep --dry-run` shows it: its cells and runs, where it would be written, and
    the model calls it would make (per role: fewest, most)."""

    plan: SweepPlan
    sweep_dir: Path
    static_dataset: Path | None
    calls: dict[str, tuple[int, int]]


def _load(config: SweepLike) -> tuple[SweepConfig, Path | None]:
    from ..config.sweep import SweepConfig

    file = Path(config) if isinstance(config, str | Path) else None
    if file is not None:
        return load_config(file, SweepConfig), file
    assert not isinstance(config, str | Path)
    return validate_config(dict(config), SweepConfig, source="sweep"), None


def plan_sweep(config: SweepLike, *, output: str | Path | None = None) -> PlannedSweep:
    """The sweep's cells, runs and call estimate, without running anything."""
    from ..pipeline.sweep import estimate_sweep_calls, static_dataset_path
    from ..pipeline.sweep_plan import plan_sweep as make_plan

    sweep, file = _load(config)
    plan = make_plan(sweep, file)
    dataset = static_dataset_path(plan, file)
    directory = (
        Path(output)
        if output is not None
        else Path(sweep.output_dir) / (sweep.name or (file.stem if file else "sweep"))
    )
    return PlannedSweep(plan, directory, dataset, estimate_sweep_calls(plan, dataset))


async def asweep(
    config: SweepLike,
    *,
    output: str | Path | None = None,
    resume: bool = False,
    arrow: str = "absolute:0.05",
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
    observer: Observer | None = None,
) -> SweepResult:
    """Run a sweep (`ragdive sweep`): a path to its YAML or the sweep config as a mapping (a relative ``base``
    is then read from the current directory). ``resume=True`` continues the sweep in ``output``.
    ``executor``: a registered executor's name; ``"ray"`` runs its runs on Ray workers (``address``: a cluster,
    else a local instance). ``observer`` hears `sweep_started`, then `run_started` and `run_ended` for each run."""
    from ..analysis.arrows import ArrowRule
    from ..executors import ExecutorRequest, check_executor
    from ..pipeline.sweep import SweepHooks, open_sweep, run_sweep

    chosen = check_executor(executor, address)
    rule = ArrowRule.parse(arrow)
    planned = plan_sweep(config, output=output)
    plan = planned.plan
    observer = observer or Observer()
    runner = chosen.make(ExecutorRequest(address=address, sweep=plan))
    try:
        line = runner.start()  # before the sweep directory: a missing extra or a wrong address leaves none
    except BaseException:
        runner.close()
        raise
    if line:
        observer.note(line)
    hooks = SweepHooks(
        on_start=lambda run, how: observer.run_started(run.run_id, run.cell.id, how),
        on_end=lambda run, status, error: observer.run_ended(run.run_id, run.cell.id, status, error),
    )
    store = None
    try:
        store = open_sweep(plan, planned.sweep_dir, resume=resume)
        observer.sweep_started(store.path, len(plan.cells), len(plan.runs))
        outcome = await run_sweep(
            plan,
            store,
            static_dataset=planned.static_dataset,
            no_cache=no_cache,
            cache_dir=cache_dir,
            arrow=rule,
            executor=runner,
            hooks=hooks,
        )
    finally:
        runner.close()
        if store is not None:
            store.release_lock()  # after the Ray driver's end: it wrote the sweep until then
    return SweepResult(
        store.path,
        outcome.status,
        dict(outcome.statuses),
        outcome.tables or {},
        dict(outcome.errors),
        table_files=list(outcome.table_files),
    )
