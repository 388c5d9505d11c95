"""`ragdive static DATASET --config CONFIG`: ask a static Q&A set once per question, score the single-turn metrics,
write a run of kind "static" next to the dynamic ones (the work is `ragdive.api.astatic`)."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ..analysis import RunScores
from ..store import RunStore
from .display import out, print_summary
from .epilogue import LiveObserver, end_run, print_sent, run_command
from .options import MODEL, OUTPUT_RUNS


def _asking(run_dir: Path, total: int) -> None:
    out.print(f"run {run_dir}: asking {total} questions", markup=False)


def static_cmd(
    dataset: Path = typer.Argument(..., help="CSV or JSONL with question and answer columns."),
    config: Path = typer.Option(
        ..., "--config", "--target", help="Experiment YAML whose `target` section is the system under test."
    ),
    model: list[str] = MODEL,
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated single-turn metrics."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Ask only the first N questions."),
    per_document: int | None = typer.Option(
        None,
        "--per-document",
        min=1,
        help="Ask up to N questions about each seed document of the config's conversations (corpus, seed, "
        "simulation.conversations), as the paper's Table 5 static arm.",
    ),
    output: Path | None = OUTPUT_RUNS,
    resume: Path | None = typer.Option(None, "--resume", help="Continue this static run (answered ones skipped)."),
    evaluate: bool = typer.Option(
        True, "--evaluate/--no-evaluate", help="Score the answers (each as soon as it is in)."
    ),
) -> None:
    """Ask every question once (a one-turn conversation) and score faithfulness, context precision, context
    recall and correctness against the dataset's answers, each answer as soon as it is in."""
    result = run_command(
        lambda live: api.astatic(
            dataset,
            config,
            models=model,
            metrics=metrics,
            limit=limit,
            per_document=per_document,
            output=output,
            resume=resume,
            evaluate=evaluate,
            observer=live,
        ),
        LiveObserver(created_line=_asking),
        saved="answered questions and scores",
    )
    print_sent(result, "questions asked", out)
    if result.scoring is not None:
        print_summary(result.scores or RunScores.from_store(RunStore.open(result.run_dir)), result.metric_names)
    end_run(result, print_dir=False)
