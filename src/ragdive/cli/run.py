"""`ragdive run CONFIG`: simulate conversations, then score them with the judge, in one run directory."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..analysis import RunScores
from ..config import ExperimentConfig, load_config
from ..pipeline import PipelineOutcome, prepare_experiment, run_experiment, with_overrides
from ._judging import print_summary
from ._progress import ProgressObserver, ScoringProgress, console, progress_display
from .simulate import EXIT_BUDGET, describe_outcome


def run_pipeline(
    experiment: ExperimentConfig,
    *,
    resume: Path | None = None,
    output: Path | None = None,
    no_cache: bool = False,
    cache_dir: Path | None = None,
    resume_hint: str = "--resume",
) -> PipelineOutcome:
    """Run both stages with live progress on stderr; print the summary table and, last on stdout, the run
    directory. Exits 3 when the budget is spent (after printing what was done)."""
    progress = progress_display()
    prepared = prepare_experiment(
        experiment,
        resume=resume,
        output=output,
        observer=ProgressObserver(progress),
        no_cache=no_cache,
        cache_dir=cache_dir,
    )
    run_dir = prepared.store.path
    scoring = ScoringProgress(progress)
    try:
        with progress:
            outcome = run_experiment(prepared, on_evaluation=scoring.start, on_score=scoring.score)
    except KeyboardInterrupt:
        console.print(
            f"interrupted: finished conversations and scores are saved; continue with {resume_hint} {run_dir}"
        )
        print(run_dir)
        raise
    console.print(describe_outcome(outcome.simulation), markup=False)
    if outcome.evaluation is not None:
        result = outcome.evaluation
        console.print(
            f"{result.written} scores written ({result.unscored} unscored), {result.skipped} already scored, "
            f"{result.judge_calls} judge calls",
            markup=False,
        )
        for note in result.notes:
            console.print(f"note: {note}", markup=False)
    if outcome.error:
        console.print(outcome.error, markup=False)
    if outcome.stage == "evaluation":
        print_summary(RunScores.from_store(outcome.store), outcome.metrics)
    print(run_dir)
    sys.stdout.flush()
    if outcome.status == "budget_exceeded":
        console.print(f"the budget is spent; raise it and continue with {resume_hint} {run_dir}")
        raise typer.Exit(EXIT_BUDGET)
    return outcome


def run_cmd(
    config: Path = typer.Argument(..., help="Experiment YAML file."),
    model: list[str] = typer.Option(
        [], "--model", help="Bind a role to a model: ROLE=provider/model (repeatable), or provider/model for all."
    ),
    output: Path | None = typer.Option(None, "--output", help="Folder that receives the run directory."),
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations to simulate."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the models even for requests seen before."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Folder of the model-call cache."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this run: both simulation and scoring."),
) -> None:
    """Simulate conversations with the target, then score them with the judge: one run directory holds both.
    Prints the per-metric summary and the run directory."""
    experiment = with_overrides(load_config(config), model, conversations=conversations, max_turns=max_turns)
    run_pipeline(experiment, resume=resume, output=output, no_cache=no_cache, cache_dir=cache_dir)
