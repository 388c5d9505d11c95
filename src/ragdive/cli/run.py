"""`ragdive run CONFIG`: simulate conversations, then score them with the judge, in one run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ..errors import ConfigError
from ._experiment import Finish, run_pipeline
from .options import ADDRESS, CACHE_DIR, EXECUTOR, MODEL, NO_CACHE, OUTPUT_RUNS, REPEAT


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
    executor: str = EXECUTOR,
    address: str | None = ADDRESS,
    shards: int | None = typer.Option(
        None, "--shards", min=1, help="With --executor ray: parts of the run (default: one per CPU of the cluster)."
    ),
    gate: bool = typer.Option(False, "--gate", help="Check evaluation.gate on the scored run: exit 6 on a failure."),
    junit: Path | None = typer.Option(None, "--junit", help="With --gate: write JUnit XML, one case per check."),
    summary_md: Path | None = typer.Option(None, "--summary-md", help="With --gate: write a Markdown summary."),
    as_json: bool = typer.Option(False, "--json", help="Print the run and its metrics as JSON (schema ragdive.run)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 5 when any validity alarm fires."),
    otel: str | None = typer.Option(
        None, "--otel", help="Send traces live to this OTLP/HTTP collector (observability.otlp_endpoint; extra otel)."
    ),
    mlflow: str | None = typer.Option(
        None, "--mlflow", help="Log the run live to this MLflow tracking URI (observability.mlflow_tracking_uri)."
    ),
) -> None:
    """Simulate conversations with the target, then score them with the judge: one run directory holds both.
    Prints the per-metric summary and the run directory. With --executor ray the conversations are split into
    parts, each simulated and scored on a Ray worker; the run directory is written here, as for a local run."""
    if gate and not api.load_experiment(config).evaluation.gate:  # before anything runs: a gate naming nothing
        raise ConfigError(f'--gate: {config} sets no evaluation.gate (e.g. correctness: ">= 0.8")')
    if (junit or summary_md) and not gate:
        raise ConfigError("--junit and --summary-md report the gate: add --gate")
    run_pipeline(
        config,
        finish=Finish(as_json=as_json, gate=gate, junit=junit, summary_md=summary_md),
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
        strict=strict,
        overrides={
            **({"observability.otlp_endpoint": otel} if otel else {}),
            **({"observability.mlflow_tracking_uri": mlflow} if mlflow else {}),
        }
        or None,
    )
