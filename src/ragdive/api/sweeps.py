"""A sweep (`ragdive sweep`): every cell's repeats (and static arm) as ordinary runs, then the tables."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config import load_config, validate_config
from .results import SweepResult


async def asweep(
    config: str | Path | Mapping[str, Any],
    *,
    output: str | Path | None = None,
    resume: bool = False,
    arrow: str = "absolute:0.05",
    no_cache: bool = False,
    cache_dir: str | Path | None = None,
    executor: str = "local",
    address: str | None = None,
) -> SweepResult:
    """Run a sweep (`ragdive sweep`): a path to its YAML or the sweep config as a mapping (a relative ``base``
    is then read from the current directory). ``resume=True`` continues the sweep in ``output``.
    ``executor="ray"`` runs its runs on Ray workers (``address``: a cluster, else a local instance)."""
    from ..analysis.arrows import ArrowRule
    from ..config.sweep import SweepConfig
    from ..executors import check_executor
    from ..pipeline.sweep import open_sweep, run_sweep, static_dataset_path
    from ..pipeline.sweep_plan import plan_sweep

    check_executor(executor, address)
    rule = ArrowRule.parse(arrow)
    file = Path(config) if isinstance(config, str | Path) else None
    sweep = load_config(file, SweepConfig) if file else validate_config(dict(config), SweepConfig, source="sweep")  # type: ignore[arg-type]
    plan = plan_sweep(sweep, file)
    dataset = static_dataset_path(plan, file)
    directory = (
        Path(output)
        if output is not None
        else Path(sweep.output_dir) / (sweep.name or (file.stem if file else "sweep"))
    )
    runner = None
    if executor == "ray":  # started before the sweep directory: a missing extra or a wrong address leaves none
        from ..executors.ray import RayExecutor

        runner = RayExecutor.for_plan(plan, address=address)
        runner.start()
    store = None
    try:
        store = open_sweep(plan, directory, resume=resume)
        outcome = await run_sweep(
            plan, store, static_dataset=dataset, no_cache=no_cache, cache_dir=cache_dir, arrow=rule, executor=runner
        )
    finally:
        if runner is not None:
            runner.close()
        if store is not None:
            store.release_lock()  # after the Ray driver's end: it wrote the sweep until then
    return SweepResult(store.path, outcome.status, dict(outcome.statuses), outcome.tables or {}, dict(outcome.errors))
