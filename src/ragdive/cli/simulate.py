"""`ragdive simulate CONFIG`: simulate conversations against the target and write them to a run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from .display import console, describe_outcome
from .epilogue import LiveObserver, end_run, run_command
from .options import CACHE_DIR, MODEL, NO_CACHE, OUTPUT_RUNS, REPEAT


def simulate_cmd(
    config: Path = typer.Argument(..., help="Experiment YAML file."),
    model: list[str] = MODEL,
    resume: Path | None = typer.Option(None, "--resume", help="Continue this run directory (skips finished ones)."),
    output: Path | None = OUTPUT_RUNS,
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations to simulate."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation."),
    repeat: int | None = REPEAT,
    no_cache: bool = NO_CACHE,
    cache_dir: Path | None = CACHE_DIR,
) -> None:
    """Simulate conversations with the target and write them to a run directory (printed at the end)."""
    result = run_command(
        lambda live: api.asimulate(
            config,
            models=model,
            conversations=conversations,
            max_turns=max_turns,
            repeat=repeat,
            output=output,
            resume=resume,
            no_cache=no_cache,
            cache_dir=cache_dir,
            observer=live,
        ),
        LiveObserver(simulating=True),
        saved="finished conversations",
    )
    console.print(describe_outcome(result.status, result.totals))
    if result.error:
        console.print(result.error, markup=False)
    end_run(result, command="simulate", config=str(config))
