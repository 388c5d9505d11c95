"""`ragdive evaluate RUN`: score a run's conversations with the judge; resumable; prints the summary table."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from ..analysis import RunScores
from ..config import load_config
from ..errors import ConfigError
from ..pipeline import build_evaluator, evaluate_store, parse_metrics, settings_from_manifest
from ..store import RunStore
from ._judging import GROUPINGS, console, print_grouped, print_summary
from ._progress import ScoringProgress, progress_display


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
    store = RunStore.open(run)
    manifest = store.read_manifest()
    settings = load_config(config) if config is not None else settings_from_manifest(manifest.config)
    names = parse_metrics(metrics, settings.evaluation.metrics)
    if bad := [b for b in by if b not in GROUPINGS]:
        raise ConfigError(f"--by {bad[0]!r}: use one of {', '.join(GROUPINGS)}")
    concurrency = concurrency or settings.evaluation.concurrency
    evaluator = build_evaluator(settings, model, names, concurrency)
    progress = progress_display()
    scoring = ScoringProgress(progress)
    with progress:
        result = asyncio.run(
            evaluate_store(
                evaluator,
                store,
                retry_failed=retry_failed,
                rescore_changed=rescore_changed,
                on_start=scoring.start,
                on_score=scoring.score,
            )
        )
    console.print(
        f"{result.written} scores written ({result.unscored} unscored), {result.skipped} already scored, "
        f"{result.judge_calls} judge calls",
        markup=False,
    )
    for note in result.notes:
        console.print(f"note: {note}", markup=False)
    scores = RunScores.from_store(store)
    print_summary(scores, evaluator.score_names)
    for grouping in by:
        print_grouped(scores, grouping, evaluator.score_names)
