"""`ragdive replay RUN --target TARGET.yaml`: send a run's recorded user messages to another target, score the new
answers, write a run of kind "replay" (the work is `ragdive.api.areplay`). Progress and summary on stderr and
stdout as `static` does; the run directory is the last line on stdout."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ._experiment import print_scored
from .display import console, out
from .epilogue import LiveObserver, end_run, print_sent, run_command
from .options import MODEL


def _replaying(run_dir: Path, total: int) -> None:
    console.print(f"run {run_dir}: replaying {total} conversations", markup=False)


def replay_cmd(
    run: Path = typer.Argument(..., help="The run whose recorded user messages are sent."),
    target: Path = typer.Option(..., "--target", help="YAML of a target section (or an experiment with target:)."),
    model: list[str] = MODEL,
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated metrics (default: the run's)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Runs folder (default: the run's output_dir)."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this replay run (same run and target)."),
    evaluate: bool = typer.Option(True, "--evaluate/--no-evaluate", help="Score after replaying."),
) -> None:
    """Frozen-user replay: the same user messages, turn by turn, to another target, then scored against the same
    ground truths, so `ragdive compare RUN REPLAY` pairs turn by turn without simulation noise. The limit: later
    messages were written in reaction to the original target's answers."""
    result = run_command(
        lambda live: api.areplay(
            run,
            target,
            models=model,
            metrics=metrics,
            output=output,
            resume=resume,
            evaluate=evaluate,
            observer=live,
        ),
        LiveObserver(created_line=_replaying),
        saved="replayed conversations and scores",
    )
    print_sent(result, "conversations replayed", console)
    if result.error:
        console.print(result.error, markup=False)
    if result.scoring is not None:
        print_scored(result)  # as every scored run ends
        out.print(f"compare: ragdive compare {result.source_dir} {result.run_dir}", markup=False, soft_wrap=True)
    end_run(result)
