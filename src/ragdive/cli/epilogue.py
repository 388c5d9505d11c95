"""What every command that makes or adds to a run shares: its one event loop (`run_loop`, once per command),
the live lines on stderr (one `LiveObserver`, the API's observer), and how it ends: on Ctrl-C the run is named with
how to continue it, on an error the run directory is named (finished work kept), and the exit code follows the
run's final status (`exit_code`: the one place a status becomes an exit code)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import typer
from rich.console import Console

from ..api import Observer, RunResult
from ..errors import RagdiveError
from ..records import Conversation, Rejection, Score, Totals, Turn
from ..store import RunStore
from ..store.completeness import EXIT_INCOMPLETE, completeness
from ..sync_edge import run_loop
from .display import (
    EXIT_ALARMS,
    EXIT_BUDGET,
    AskingProgress,
    ProgressObserver,
    ScoringProgress,
    console,
    print_scoring,
    progress_display,
)

CreatedLine = Callable[[Path, int], None]


def exit_code(status: str) -> int:
    """A run's final status as the command's exit code: 0 finished, 3 budget spent (resume continues it), 4
    incomplete (conversations in error or judge failures; the hint says what completes it). (A failed or
    interrupted run has raised before: its error's code, or Ctrl-C's.)"""
    return {"budget_exceeded": EXIT_BUDGET, "incomplete": EXIT_INCOMPLETE}.get(status, 0)


class LiveObserver(Observer):
    """The command line's live lines: simulation (conversations, turns, rejections, tokens, cost), asking
    (`static`, `replay`) and scoring. The lines start once the run exists (or scoring starts): a mistake found
    before is one error line, not a broken progress display."""

    def __init__(
        self,
        *,
        simulating: bool = False,
        created_line: CreatedLine | None = None,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        self.progress = progress_display()
        self._on_started = on_started
        """Called once, when the simulation starts (`run` prepares its report's fixed parts meanwhile)."""
        self.run_dir: Path | None = None
        self._simulation = ProgressObserver(self.progress) if simulating else None
        self._scoring = ScoringProgress(self.progress)
        self._asking: AskingProgress | None = None
        self._created_line = created_line
        self._live = False

    def _start(self) -> None:
        if not self._live:
            self._live = True
            self.progress.start()

    def stop(self) -> None:
        if self._live:
            self._live = False
            self.progress.stop()

    def note(self, line: str) -> None:
        console.print(line, markup=False, soft_wrap=True)

    def run_created(self, run_dir: Path, to_do: int | None = None) -> None:
        self.run_dir = run_dir
        if to_do is not None:
            if self._created_line is not None:
                self._created_line(run_dir, to_do)
            self._asking = AskingProgress(self.progress, to_do)
        self._start()

    def started(self, total: int, already_done: int, totals: Totals) -> None:
        on_started, self._on_started = self._on_started, None
        if on_started is not None:
            on_started()
        if self._simulation is not None:
            self._simulation.started(total, already_done, totals)

    def turn(self, conversation_id: str, turn: Turn) -> None:
        if self._simulation is not None:
            self._simulation.turn(conversation_id, turn)

    def rejection(self, rejection: Rejection) -> None:
        if self._simulation is not None:
            self._simulation.rejection(rejection)

    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        if self._simulation is not None:
            self._simulation.conversation(conversation, totals)

    def answered(self, conversation: Conversation) -> None:
        if self._asking is not None:
            self._asking.conversation(conversation)

    def scoring_started(self, total: int | None, done: int) -> None:
        self._start()
        self._scoring.start(total, done)

    def scored(self, score: Score) -> None:
        self._scoring.score(score)

    def settle(self, totals: Totals) -> None:
        """The run's final totals on the simulation line before it stops: the line last moved when a
        conversation finished, so calls made since (a budget stop's in-flight conversations, the judge's) would
        leave it showing an older cost beside the final line's."""
        if self._simulation is not None:
            self._simulation.settle(totals)


def run_command(
    work: Callable[[LiveObserver], Awaitable[RunResult]],
    live: LiveObserver,
    *,
    saved: str = "finished conversations and scores",
    hint: str = "--resume",
) -> RunResult:
    """The command's one event loop: ``work(live)`` to its end. Ctrl-C: the run named with how to continue it
    (``hint`` and the run directory), then the interrupt goes on to main; an error: the run directory named, then
    the error goes on to main, which prints it."""
    try:
        try:
            result = run_loop(_awaited(work, live))
            live.settle(result.totals)
            return result
        finally:
            live.stop()
    except KeyboardInterrupt:
        if live.run_dir is not None:
            console.print(f"interrupted: {saved} are saved; continue with {hint} {live.run_dir}")
            print(live.run_dir)
        raise
    except RagdiveError:
        if live.run_dir is not None:
            console.print(f"run directory (finished work kept): {live.run_dir}", markup=False, soft_wrap=True)
        raise


async def _awaited(work: Callable[[LiveObserver], Awaitable[RunResult]], live: LiveObserver) -> RunResult:
    return await work(live)


def print_sent(result: RunResult, sent: str, on: Console) -> None:
    """What a run that asks a target fixed messages did (`static`: questions, `replay`: conversations): how many
    were sent, how many the target failed, then what scoring did (its notes too), as `run` and `evaluate` say it."""
    on.print(f"{result.sent} {sent}, {result.target_errors} target errors", markup=False)
    if result.scoring is not None:
        print_scoring(result.scoring, on)


def end_run(
    result: RunResult,
    *,
    hint: str = "--resume",
    print_dir: bool = True,
    strict: bool = False,
    command: str = "run",
    config: str | None = None,
) -> None:
    """The last line on stdout is the run directory (``print_dir``); the exit code follows the run's status (and,
    with ``strict``, its validity alarms)."""
    if print_dir:
        print(result.run_dir)
        sys.stdout.flush()
    code = exit_code(result.status)
    if code == EXIT_BUDGET:
        console.print(f"the budget is spent; raise it and continue with {hint} {result.run_dir}")
    if code == EXIT_INCOMPLETE:  # the counts were printed with the run's error; here what completes it
        gaps = completeness(RunStore.open(result.run_dir))
        console.print(gaps.hint(str(result.run_dir), config, command), markup=False, soft_wrap=True)
    if code:
        raise typer.Exit(code)
    if strict and RunStore.open(result.run_dir).read_manifest().alarms:
        raise typer.Exit(EXIT_ALARMS)
