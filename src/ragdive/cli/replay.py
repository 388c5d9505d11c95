"""`ragdive replay RUN --target TARGET.yaml`: send a run's recorded user messages to another target, score the new
answers, write a run of kind "replay" (the work is `ragdive.pipeline.run_replay`). Progress and summary on stderr
and stdout as `static` does; the run directory is the last line on stdout."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import typer
from rich.progress import Progress

from ..analysis import RunScores
from ..pipeline import ReplayHooks, ReplayOutcome, run_replay
from ..records import Conversation
from ..store import RunStore
from ._experiment import _write_report
from .display import EXIT_BUDGET, AskingProgress, ScoringProgress, console, out, print_summary, progress_display


def _hooks(progress: Progress, run_dir: list[Path]) -> ReplayHooks:
    """The live lines start once the run exists: a mistake found before is one error line."""
    sending: list[AskingProgress] = []
    scoring = ScoringProgress(progress)

    def created(store: RunStore, total: int) -> None:
        run_dir.append(store.path)
        console.print(f"run {store.path}: replaying {total} conversations", markup=False)
        sending.append(AskingProgress(progress, total))
        progress.start()

    def conversation(replayed: Conversation) -> None:
        sending[0].conversation(replayed)

    return ReplayHooks(
        on_created=created, on_conversation=conversation, on_scoring=scoring.start, on_score=scoring.score
    )


async def _replay(source: Path, target: Path, run_dir: list[Path], **options: object) -> ReplayOutcome:
    progress = progress_display()
    async with AsyncExitStack() as resources:
        try:
            return await run_replay(source, target, resources, hooks=_hooks(progress, run_dir), **options)  # type: ignore[arg-type]
        finally:
            progress.stop()


def replay_cmd(
    run: Path = typer.Argument(..., help="The run whose recorded user messages are sent."),
    target: Path = typer.Option(..., "--target", help="YAML of a target section (or an experiment with target:)."),
    model: list[str] = typer.Option([], "--model", help="Bind a role: target=..., judge=... (repeatable)."),
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated metrics (default: the run's)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Runs folder (default: the run's output_dir)."),
    resume: Path | None = typer.Option(None, "--resume", help="Continue this replay run (same run and target)."),
    evaluate: bool = typer.Option(True, "--evaluate/--no-evaluate", help="Score after replaying."),
) -> None:
    """Frozen-user replay: the same user messages, turn by turn, to another target, then scored against the same
    ground truths, so `ragdive compare RUN REPLAY` pairs turn by turn without simulation noise. The limit: later
    messages were written in reaction to the original target's answers."""
    run_dir: list[Path] = []
    try:
        outcome = asyncio.run(
            _replay(
                run, target, run_dir, models=model, metrics=metrics, output=output, resume=resume, evaluate=evaluate
            )
        )
    except KeyboardInterrupt:
        if run_dir:
            console.print(
                f"interrupted: replayed conversations and scores are saved; continue with --resume {run_dir[0]}"
            )
            print(run_dir[0])
        raise
    console.print(f"{outcome.replayed} conversations replayed, {outcome.errors} with errors", markup=False)
    if outcome.evaluation is not None:
        result = outcome.evaluation
        console.print(f"{result.written} scores ({result.unscored} unscored), {result.judge_calls} judge calls")
    if outcome.error:
        console.print(outcome.error, markup=False)
    if outcome.evaluation is not None:
        print_summary(RunScores.from_store(outcome.store), outcome.metrics)
        _write_report(outcome.store)  # as every scored run ends
        out.print(f"compare: ragdive compare {outcome.source.path} {outcome.store.path}", markup=False, soft_wrap=True)
    print(outcome.store.path)
    sys.stdout.flush()
    if outcome.status == "budget_exceeded":
        console.print(f"the budget is spent; raise it and continue with --resume {outcome.store.path}")
        raise typer.Exit(EXIT_BUDGET)
