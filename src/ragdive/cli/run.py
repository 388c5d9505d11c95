"""`ragdive run CONFIG`: simulate conversations, then score them with the judge, in one run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from ._experiment import run_pipeline
from .options import CACHE_DIR, MODEL, NO_CACHE, OUTPUT_RUNS, REPEAT


def run_cmd(
    config: Path = typer.Argument(..., help="Experiment YAML file."),
    model: list[str] = MODEL,
    output: Path | None = OUTPUT_RUNS,
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations to simulate."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation."),
    repeat: int | None = REPEAT,
    no_cache: bool = NO_CACHE,
    cache_dir: Path | None = CACHE_DIR,
    resume: Path | None = typer.Option(None, "--resume", help="Continue this run: both simulation and scoring."),
    executor: str = typer.Option("local", "--executor", help="local (this process) or ray (extra `ray`)."),
    address: str | None = typer.Option(None, "--address", help="With --executor ray: the cluster (default: local)."),
    shards: int | None = typer.Option(
        None, "--shards", min=1, help="With --executor ray: parts of the run (default: one per CPU of the cluster)."
    ),
) -> None:
    """Simulate conversations with the target, then score them with the judge: one run directory holds both.
    Prints the per-metric summary and the run directory. With --executor ray the conversations are split into
    parts, each simulated and scored on a Ray worker; the run directory is written here, as for a local run."""
    run_pipeline(
        config,
        models=model,
        conversations=conversations,
        max_turns=max_turns,
        repeat=repeat,
        output=output,
        resume=resume,
        no_cache=no_cache,
        cache_dir=cache_dir,
        executor=executor,
        address=address,
        shards=shards,
    )
