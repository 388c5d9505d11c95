"""`ragdive run CONFIG`: simulate conversations, then score them with the judge, in one run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from ..config import load_config
from ..executors import check_executor
from ..pipeline import with_overrides
from ._experiment import RayParts, run_pipeline


def run_cmd(
    config: Path = typer.Argument(..., help="Experiment YAML file."),
    model: list[str] = typer.Option(
        [], "--model", help="Bind a role to a model: ROLE=provider/model (repeatable), or provider/model for all."
    ),
    output: Path | None = typer.Option(None, "--output", help="Folder that receives the run directory."),
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations to simulate."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation."),
    repeat: int | None = typer.Option(
        None, "--repeat", min=0, help="Repeat index: same documents and plan, new samples (not served from cache)."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the models even for requests seen before."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Folder of the model-call cache."),
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
    check_executor(executor, address, shards)
    experiment = with_overrides(
        load_config(config), model, conversations=conversations, max_turns=max_turns, repeat=repeat
    )
    ray = RayParts.start(address, shards) if executor == "ray" else None
    try:
        run_pipeline(experiment, resume=resume, output=output, no_cache=no_cache, cache_dir=cache_dir, ray=ray)
    finally:
        if ray is not None:
            ray.executor.close()
