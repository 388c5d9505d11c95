"""`ragdive simulate CONFIG`: simulate conversations against the target and write them to a run directory."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ..config import load_config
from ..pipeline import with_overrides
from ..records import Conversation, Rejection, Totals, Turn
from ..simulation import RunObserver, RunOutcome, prepare_run, run_simulation

# progress goes to stderr; stdout carries the run directory, so `run=$(ragdive simulate x.yaml)` works
console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
EXIT_BUDGET = 3


class ProgressObserver(RunObserver):
    """Live progress: conversations done, turns, rejections by category, tokens, cost."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("conversations", total=None, stats="")
        self.turns = 0
        self.categories: Counter[str] = Counter()
        self.rejections = 0
        self.totals = Totals()

    def started(self, total: int, already_done: int, totals: Totals) -> None:
        # a resumed run starts from what is already on disk (rejection categories: counted from now on)
        self.totals, self.turns, self.rejections = totals, totals.turns, totals.rejections
        self.progress.update(self.task, total=total, completed=already_done)
        self._refresh()

    def turn(self, conversation_id: str, turn: Turn) -> None:
        self.turns += 1
        self._refresh()

    def rejection(self, rejection: Rejection) -> None:
        self.rejections += 1
        names = [str(c) for c in rejection.categories] or ["uncategorised"]
        self.categories.update(names)
        self._refresh()

    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        self.totals = totals
        self.progress.advance(self.task)
        self._refresh()

    def _refresh(self) -> None:
        t = self.totals
        by_category = ", ".join(f"{name} {n}" for name, n in self.categories.most_common())
        cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
        stats = (
            f"turns {self.turns} | rejections {self.rejections}"
            + (f" ({by_category})" if by_category else "")
            + f" | tokens {t.prompt_tokens + t.completion_tokens} | cost {cost}"
        )
        self.progress.update(self.task, stats=stats)


def describe_outcome(outcome: RunOutcome) -> str:
    t = outcome.totals
    cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
    return (
        f"{outcome.status}: {t.conversations} conversations, {t.turns} turns, {t.rejections} rejections, "
        f"{t.errors} errors, {t.prompt_tokens + t.completion_tokens} tokens, cost {cost}"
    )


def progress_display() -> Progress:
    """The live progress lines (on stderr): a bar per stage with its counts and a free-text `stats` field."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[stats]}"),
        console=console,
        transient=False,
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
