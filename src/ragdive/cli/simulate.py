"""`ragdive simulate CONFIG`: simulate conversations against the target and write them to a run directory."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import typer

from ..config import ExperimentConfig, load_config
from ..errors import RagdiveError
from ..pipeline import run_simulation, with_overrides
from ..simulation import RunOutcome, prepare_run
from .display import EXIT_BUDGET, ProgressObserver, console, describe_outcome, progress_display


async def _simulate(
    experiment: ExperimentConfig,
    run_dir: list[Path],
    *,
    resume: Path | None,
    output: Path | None,
    no_cache: bool,
    cache_dir: Path | None,
) -> RunOutcome:
    progress = progress_display()
    async with AsyncExitStack() as resources:
        prepared = await prepare_run(
            experiment,
            resources,
            resume=resume,
            output=output,
            observer=ProgressObserver(progress),
            no_cache=no_cache,
            cache_dir=cache_dir,
        )
        run_dir.append(prepared.store.path)
        if prepared.corpus is not None:
            console.print(prepared.corpus.line(), markup=False, soft_wrap=True)
        with progress:
            return await run_simulation(prepared)


def simulate_cmd(
    config: Path = typer.Argument(..., help="Experiment YAML file."),
    model: list[str] = typer.Option(
        [], "--model", help="Bind a role to a model: ROLE=provider/model (repeatable), or provider/model for all."
    ),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this run directory (skips finished ones)."),
    output: Path | None = typer.Option(None, "--output", help="Folder that receives the run directory."),
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations to simulate."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation."),
    repeat: int | None = typer.Option(
        None, "--repeat", min=0, help="Repeat index: same documents and plan, new samples (not served from cache)."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the models even for requests seen before."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Folder of the model-call cache."),
) -> None:
    """Simulate conversations with the target and write them to a run directory (printed at the end)."""
    experiment = with_overrides(
        load_config(config), model, conversations=conversations, max_turns=max_turns, repeat=repeat
    )
    run_dir: list[Path] = []  # known once the run is created, also when it is interrupted later
    try:
        outcome = asyncio.run(
            _simulate(experiment, run_dir, resume=resume, output=output, no_cache=no_cache, cache_dir=cache_dir)
        )
    except KeyboardInterrupt:
        if run_dir:
            console.print(f"interrupted: finished conversations are saved; continue with --resume {run_dir[0]}")
            print(run_dir[0])
        raise
    except RagdiveError:  # the error is printed by main; the run, when there is one, is named first
        if run_dir:
            console.print(f"run directory (finished work kept): {run_dir[0]}", markup=False, soft_wrap=True)
        raise
    console.print(describe_outcome(outcome))
    if outcome.error:
        console.print(outcome.error, markup=False)
    print(run_dir[0])
    sys.stdout.flush()
    if outcome.status == "budget_exceeded":
        console.print(f"the budget is spent; raise it and continue with --resume {run_dir[0]}")
        raise typer.Exit(EXIT_BUDGET)
