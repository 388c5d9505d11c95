"""`ragdive evaluate RUN`: score a run's conversations with the judge; resumable; prints the summary table."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ..analysis import RunScores
from ..errors import ConfigError
from ..store import RunStore
from ._experiment import print_run_alarms
from .display import GROUPINGS, console, out, print_grouped, print_scoring, print_summary
from .epilogue import LiveObserver, end_run, run_command
from .options import METRICS, MODEL


def evaluate_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    model: list[str] = MODEL,
    config: Path | None = typer.Option(None, "--config", help="Experiment YAML for models and evaluation settings."),
    metrics: str | None = METRICS,
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Judge calls in flight."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Ask the judge again where it failed before."),
    rescore_changed: bool = typer.Option(
        False, "--rescore-changed", help="Score again items scored by another version of their metric or prompt."
    ),
    by: list[str] = typer.Option([], "--by", help="Also summarise by turn, question_type or persona (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the run and its metrics as JSON (schema ragdive.run)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 5 when any validity alarm fires."),
) -> None:
    """Score RUN: writes evaluations.jsonl (skipping items already scored), updates the manifest totals and prints
    the per-metric summary. A judge failure is recorded as unscored with its reason, never as 0."""
    if bad := [b for b in by if b not in GROUPINGS]:
        raise ConfigError(f"--by {bad[0]!r}: use one of {', '.join(GROUPINGS)}")
    result = run_command(
        lambda observer: api.aevaluate(
            run,
            config=config,
            models=model,
            metrics=metrics,
            concurrency=concurrency,
            retry_failed=retry_failed,
            rescore_changed=rescore_changed,
            observer=observer,
        ),
        LiveObserver(),
    )
    scores = result.scores or RunScores.from_store(RunStore.open(result.run_dir))
    if as_json:  # the document alone on stdout; what the judge did goes to stderr
        from ..analysis.outputs import run_document
        from ..records.outputs import dump

        if result.scoring is not None:
            print_scoring(result.scoring, console)
        print(dump(run_document(RunStore.open(result.run_dir), read=scores, metrics=result.metric_names)))
        end_run(result, print_dir=False, strict=strict, command="evaluate")  # the exit code follows the status
        return
    if result.scoring is not None:
        print_scoring(result.scoring, out)
    print_summary(scores, result.metric_names)
    for grouping in by:
        print_grouped(scores, grouping, result.metric_names)
    print_run_alarms(result.run_dir)
    if result.error and result.status == "incomplete":
        out.print(result.error, markup=False, soft_wrap=True)
    end_run(result, print_dir=False, strict=strict, command="evaluate")
