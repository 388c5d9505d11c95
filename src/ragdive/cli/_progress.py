"""The live progress lines on stderr (`run`, `simulate`, `evaluate`, `static`, `demo`), made to fit the terminal.

Each line is: spinner, stage, bar, done/total, elapsed time, then free-text stats. The first five have fixed
widths, so the stats get what is left of the line. A stage gives its stats as alternatives, richest first (with
the rejections by category), then shorter ones; the widest that fits is shown. Left to itself, rich would squeeze
the bar and the counts instead, the part that matters most on a narrow terminal.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column
from rich.text import Text

from ..records import Conversation, Rejection, Score, Totals, Turn
from ..simulation import RunObserver

# progress goes to stderr; stdout carries the run directory, so `run=$(ragdive simulate x.yaml)` works
console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)

LABEL_WIDTH = 10  # the longest stage name, "simulating"
BAR_WIDTH = 20
COUNTS_WIDTH = 9  # "1234/5000"; wider counts take their room from the stats
ELAPSED_WIDTH = 8  # "10:00:00"
FIXED_WIDTH = 1 + LABEL_WIDTH + BAR_WIDTH + COUNTS_WIDTH + ELAPSED_WIDTH + 5  # and one space between columns


def fit(choices: Sequence[str], room: int) -> str:
    """The first of ``choices`` (richest first) that fits in ``room`` cells; the last one cut short otherwise."""
    for text in choices:
        if len(text) <= room:
            return text
    return choices[-1][: max(room, 0)] if choices else ""


def _counts_width(task: Task) -> int:
    """As MofNCompleteColumn prints them: done padded to the width of the total, a slash, the total."""
    if task.total is None:
        return len(str(int(task.completed))) + 2
    return 2 * len(str(int(task.total))) + 1


class StatsColumn(ProgressColumn):
    """The stats alternative (``task.fields["stats"]``) that fits in what the fixed columns leave."""

    def __init__(self, console: Console) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self.console = console

    def render(self, task: Task) -> Text:
        room = self.console.width - FIXED_WIDTH - max(0, _counts_width(task) - COUNTS_WIDTH)
        return Text(fit(task.fields.get("stats") or (), room), no_wrap=True)


def progress_display(target: Console | None = None) -> Progress:
    """The live progress lines, on ``target`` (default: stderr)."""
    target = target or console
    return Progress(
        SpinnerColumn(table_column=Column(width=1, no_wrap=True)),
        TextColumn("[bold]{task.description}", table_column=Column(width=LABEL_WIDTH, no_wrap=True)),
        BarColumn(bar_width=BAR_WIDTH, table_column=Column(width=BAR_WIDTH, no_wrap=True)),
        MofNCompleteColumn(table_column=Column(min_width=COUNTS_WIDTH, no_wrap=True)),
        TimeElapsedColumn(table_column=Column(min_width=ELAPSED_WIDTH, no_wrap=True)),
        StatsColumn(target),
        console=target,
        transient=False,
    )


def simulation_stats(turns: int, rejections: int, categories: Counter[str], totals: Totals) -> list[str]:
    """Richest first: everything with the rejections by category; then without them; then fewer parts."""
    cost = "unknown" if totals.cost_usd is None else f"${totals.cost_usd:.4f}"
    parts = [
        f"turns {turns}",
        f"rejections {rejections}",
        f"tokens {totals.prompt_tokens + totals.completion_tokens}",
        f"cost {cost}",
    ]
    choices = [" | ".join(parts[:n]) for n in range(len(parts), 0, -1)]
    if categories:
        by_category = ", ".join(f"{name} {n}" for name, n in categories.most_common())
        choices.insert(0, " | ".join([parts[0], f"{parts[1]} ({by_category})", *parts[2:]]))
    return choices


class ProgressObserver(RunObserver):
    """Simulation progress: conversations done of planned, turns, rejections (by category), tokens, cost."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("simulating", total=None, stats=())
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
        stats = simulation_stats(self.turns, self.rejections, self.categories, self.totals)
        self.progress.update(self.task, stats=stats)


class ScoringProgress:
    """Scoring progress: judge items done of the run's total (already scored ones count as done), unscored."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None
        self.unscored = 0

    def start(self, total: int, done: int) -> None:
        self.task = self.progress.add_task("scoring", total=total, completed=done, stats=("unscored 0",))

    def score(self, score: Score) -> None:
        self.unscored += 0 if score.scored else 1
        if self.task is not None:
            self.progress.update(self.task, advance=1, stats=(f"unscored {self.unscored}",))


class AskingProgress:
    """Static mode: questions answered by the target, and how many of them failed."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.errors = 0
        self.task = progress.add_task("asking", total=total, stats=("target errors 0",))

    def conversation(self, conversation: Conversation) -> None:
        self.errors += conversation.status == "error"
        self.progress.update(self.task, advance=1, stats=(f"target errors {self.errors}",))
