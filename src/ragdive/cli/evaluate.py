"""`ragdive evaluate RUN`: score a run's conversations with the judge; resumable; prints the summary table."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

import typer

from ..analysis import RunScores
from ..config import ExperimentConfig, load_config
from ..errors import ConfigError
from ..pipeline import ScoringOutcome, score_run
from .display import GROUPINGS, ScoringProgress, out, print_grouped, print_scoring, print_summary, progress_display


async def _evaluate(
    run: Path,
    settings: ExperimentConfig | None,
    *,
    models: list[str],
    metrics: str | None,
    concurrency: int | None,
    retry_failed: bool,
    rescore_changed: bool,
) -> ScoringOutcome:
    progress = progress_display()
    scoring = ScoringProgress(progress)

    def start(total: int, done: int) -> None:
        progress.start()  # only now: a mistake found before (no judge model) is one error line, no progress
        scoring.start(total, done)

    async with AsyncExitStack() as resources:
        try:
            return await score_run(
                run,
                resources,
                models=models,
                config=settings,
                metrics=metrics,
                concurrency=concurrency,
                retry_failed=retry_failed,
                rescore_changed=rescore_changed,
                on_start=start,
                on_score=scoring.score,
            )
        finally:
            progress.stop()


def evaluate_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    model: list[str] = typer.Option([], "--model", help="Bind a role: judge=provider/model (repeatable)."),
    config: Path | None = typer.Option(None, "--config", help="Experiment YAML for models and evaluation settings."),
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated metric names (default: config)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Judge calls in flight."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Ask the judge again where it failed before."),
    rescore_changed: bool = typer.Option(
        False, "--rescore-changed", help="Score again items scored by another version of their metric or prompt."
    ),
    by: list[str] = typer.Option([], "--by", help="Also summarise by turn, question_type or persona (repeatable)."),
) -> None:
    """Score RUN: writes evaluations.jsonl (skipping items already scored), updates the manifest totals and prints
    the per-metric summary. A judge failure is recorded as unscored with its reason, never as 0."""
    if bad := [b for b in by if b not in GROUPINGS]:
        raise ConfigError(f"--by {bad[0]!r}: use one of {', '.join(GROUPINGS)}")
    settings = load_config(config) if config is not None else None
    outcome = asyncio.run(
        _evaluate(
            run,
            settings,
            models=model,
            metrics=metrics,
            concurrency=concurrency,
            retry_failed=retry_failed,
            rescore_changed=rescore_changed,
        )
    )
    print_scoring(outcome.result, out)
    scores = RunScores.from_store(outcome.store)
    print_summary(scores, outcome.metrics)
    for grouping in by:
        print_grouped(scores, grouping, outcome.metrics)
