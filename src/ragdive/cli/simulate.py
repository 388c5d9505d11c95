"""`ragdive simulate CONFIG`: simulate conversations against the target and write them to a run directory."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..config import load_config
from ..pipeline import with_overrides
from ..simulation import RunOutcome, prepare_run, run_simulation
from ._progress import ProgressObserver, console, progress_display

EXIT_BUDGET = 3


def describe_outcome(outcome: RunOutcome) -> str:
    t = outcome.totals
    cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
    return (
        f"{outcome.status}: {t.conversations} conversations, {t.turns} turns, {t.rejections} rejections, "
        f"{t.errors} errors, {t.prompt_tokens + t.completion_tokens} tokens, cost {cost}"
    )


def simulate_cmd(
    config: Path = typer.Argument(..., help="Experiment YAML file."),
    model: list[str] = typer.Option(
        [], "--model", help="Bind a role to a model: ROLE=provider/model (repeatable), or provider/model for all."
    ),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this run directory (skips finished ones)."),
    output: Path | None = typer.Option(None, "--output", help="Folder that receives the run directory."),
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations to simulate."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the models even for requests seen before."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Folder of the model-call cache."),
) -> None:
    """Simulate conversations with the target and write them to a run directory (printed at the end)."""
    experiment = with_overrides(load_config(config), model, conversations=conversations, max_turns=max_turns)

    progress = progress_display()
    observer = ProgressObserver(progress)
    prepared = prepare_run(
        experiment, resume=resume, output=output, observer=observer, no_cache=no_cache, cache_dir=cache_dir
    )
    run_dir = prepared.store.path
    try:
        with progress:
            outcome = run_simulation(prepared)
    except KeyboardInterrupt:
        console.print(f"interrupted: finished conversations are saved; continue with --resume {run_dir}")
        print(run_dir)
        raise
    console.print(describe_outcome(outcome))
    if outcome.error:
        console.print(outcome.error, markup=False)
    print(run_dir)
    sys.stdout.flush()
    if outcome.status == "budget_exceeded":
        console.print(f"the budget is spent; raise it and continue with --resume {run_dir}")
        raise typer.Exit(EXIT_BUDGET)
