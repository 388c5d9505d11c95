"""`ragdive static DATASET --target CONFIG`: ask a static Q&A set once per question, score the single-turn
metrics, write a run of kind "static" next to the dynamic ones (the work is `ragdive.pipeline.run_static`)."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

import typer
from rich.progress import Progress

from ..analysis import RunScores
from ..config import ExperimentConfig, load_config
from ..errors import ConfigError
from ..pipeline import StaticHooks, StaticOutcome, run_static
from ..records import Conversation
from ..store import RunStore
from .display import AskingProgress, ScoringProgress, out, print_summary, progress_display


def _hooks(progress: Progress) -> StaticHooks:
    """The static run's progress: asking (once the run exists and the number of questions is known), scoring. The
    live lines start only then: a mistake found before is one error line, not a broken progress display."""
    asking: list[AskingProgress] = []
    scoring = ScoringProgress(progress)

    def created(store: RunStore, total: int) -> None:
        out.print(f"run {store.path}: asking {total} questions", markup=False)
        asking.append(AskingProgress(progress, total))
        progress.start()

    def answer(conversation: Conversation) -> None:
        asking[0].conversation(conversation)

    return StaticHooks(on_created=created, on_answer=answer, on_scoring=scoring.start, on_score=scoring.score)


async def _static(
    cfg: ExperimentConfig,
    dataset: Path,
    *,
    models: list[str],
    metrics: str | None,
    limit: int | None,
    per_document: int | None,
    output: Path | None,
    evaluate: bool,
) -> StaticOutcome:
    progress = progress_display()
    async with AsyncExitStack() as resources:
        try:
            return await run_static(
                cfg,
                dataset,
                resources,
                models=models,
                metrics=metrics,
                limit=limit,
                per_document=per_document,
                output=output,
                evaluate=evaluate,
                hooks=_hooks(progress),
            )
        finally:
            progress.stop()


def static_cmd(
    dataset: Path = typer.Argument(..., help="CSV or JSONL with question and answer columns."),
    target: Path = typer.Option(..., "--target", help="Experiment YAML whose `target` section is the system."),
    model: list[str] = typer.Option([], "--model", help="Bind a role: judge=provider/model (repeatable)."),
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated single-turn metrics."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Ask only the first N questions."),
    per_document: int | None = typer.Option(
        None,
        "--per-document",
        min=1,
        help="Ask up to N questions about each seed document of the config's conversations (corpus, seed, "
        "simulation.conversations), as the paper's Table 5 static arm.",
    ),
    output: Path | None = typer.Option(None, "--output", help="Runs folder (default: the config's output_dir)."),
    evaluate: bool = typer.Option(
        True, "--evaluate/--no-evaluate", help="Score the answers (each as soon as it is in)."
    ),
) -> None:
    """Ask every question once (a one-turn conversation) and score faithfulness, context precision, context
    recall and correctness against the dataset's answers, each answer as soon as it is in."""
    cfg: ExperimentConfig = load_config(target)
    if cfg.target is None:
        raise ConfigError(f"{target}: no `target` section: static mode needs the system under test")
    outcome = asyncio.run(
        _static(
            cfg,
            dataset,
            models=model,
            metrics=metrics,
            limit=limit,
            per_document=per_document,
            output=output,
            evaluate=evaluate,
        )
    )
    out.print(f"{outcome.asked} questions asked, {outcome.errors} target errors", markup=False)
    if outcome.evaluation is not None:
        result = outcome.evaluation
        out.print(f"{result.written} scores ({result.unscored} unscored), {result.judge_calls} judge calls")
        print_summary(RunScores.from_store(outcome.store), outcome.metrics)
