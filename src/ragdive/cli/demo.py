"""`ragdive demo`: the whole pipeline offline on the packaged corpus and the packaged Gemma-3-270M."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ..config import ROLES
from ..demo import NOTICE, demo_config
from ._experiment import run_pipeline
from .display import console, out


def demo_cmd(
    output: Path = typer.Option(
        Path("ragdive-demo"), "--output", "-o", help="Folder for the run, the cache and the index."
    ),
    conversations: int | None = typer.Option(None, "--conversations", min=1, help="Conversations (default 2)."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Turns per conversation (default 2)."),
    model: list[str] = typer.Option(
        [], "--model", help="Bind a role to another model: ROLE=provider/model (repeatable), or provider/model."
    ),
    resume: Path | None = typer.Option(None, "--resume", help="Continue an interrupted demo run."),
) -> None:
    """Simulate and score a few conversations about a fictional kettle, fully offline (no API key): the packaged
    Gemma-3-270M plays every role and the reference RAG (BM25) answers."""
    experiment = api.load_experiment(
        demo_config(output), models=model, conversations=conversations, max_turns=max_turns
    )
    specs = [experiment.models.for_role(role) for role in ROLES]
    if any(spec is not None and spec.model == "llamacpp/default" for spec in specs):  # said before it starts
        console.print(NOTICE, markup=False)
    sim = experiment.simulation
    console.print(
        f"demo: {sim.conversations} conversations x {sim.max_turns} turns on the packaged kettle corpus; "
        f"run, cache and index under {output}",
        markup=False,
    )
    result = run_pipeline(experiment, resume=resume, resume_hint=f"ragdive demo --output {output} --resume")
    run_dir = result.run_dir
    out.print("\nnext:", markup=False)
    out.print(f"  ragdive runs show {run_dir}", markup=False)
    out.print(f"  ragdive evaluate {run_dir} --by persona --by turn", markup=False)
    out.print("  ragdive run my-experiment.yaml --model judge=openai/gpt-4o-mini   # a real evaluation", markup=False)
