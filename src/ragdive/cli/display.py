"""Everything the commands show on the terminal: the consoles (stdout for results, stderr for progress and
errors), the live progress lines, the summary tables and the outcome lines. Commands print through this module,
never through a Console of their own.

The progress lines (`run`, `simulate`, `evaluate`, `static`, `demo`) are made to fit the terminal. Each line
is: spinner, stage, bar, done/total, elapsed time, then free-text stats. The first five have fixed widths, so the
stats get what is left of the line. A stage gives its stats as alternatives, richest first (with the rejections by
category), then shorter ones; the widest that fits is shown. Left to itself, rich would squeeze the bar and the
counts instead, the part that matters most on a narrow terminal.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich import box
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
from rich.table import Column, Table
from rich.text import Text

from ..analysis import MetricSummary, RunScores, summarize_by, summarize_run
from ..records import Alarm, Conversation, Rejection, Score, Totals, Turn

if TYPE_CHECKING:
    from ..api import ScoringResult

# progress goes to stderr; stdout carries the run directory, so `run=$(ragdive simulate x.yaml)` works
console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
# results (tables, listings) on stdout; a pipe gets 160 columns, not rich's 80, so tables are not truncated in
# logs and tests
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
# error messages: never wrapped mid-path
errors = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_BUDGET = 3
"""The exit code of a run stopped by its budget (its finished work is kept; raise the budget and resume)."""
EXIT_ALARMS = 5
"""With --strict: the run finished, but a validity alarm fired (README: exit codes)."""


def print_alarms(alarms: list[Alarm], on: Console) -> None:
    """The validity alarms, after the summary: one line each, or one line saying there are none."""
    if not alarms:
        on.print("validity alarms: none", markup=False)
        return
    on.print(f"validity alarms ({len(alarms)}): these numbers may mislead", markup=False)
    for alarm in alarms:
        on.print(f"  ! {alarm.code}: {alarm.message}", markup=False, soft_wrap=True)


LABEL_WIDTH = 10  # the longest stage name, "simulating"
BAR_WIDTH = 20
NARROW_BAR_WIDTH = 6  # below WIDE columns: the figures need the room more than the bar
WIDE = 120
COUNTS_WIDTH = 9  # "1234/5000"; wider counts take their room from the stats
ELAPSED_WIDTH = 8  # "10:00:00"


def bar_width(console: Console) -> int:
    return BAR_WIDTH if console.width >= WIDE else NARROW_BAR_WIDTH


def fixed_width(console: Console) -> int:
    """The cells the columns before the stats take (and one space between columns)."""
    return 1 + LABEL_WIDTH + bar_width(console) + COUNTS_WIDTH + ELAPSED_WIDTH + 5


def fit(choices: Sequence[str], room: int) -> str:
    """The first of ``choices`` (richest first) that fits in ``room`` cells; nothing when none does (a figure cut
    short would show a wrong number)."""
    return next((text for text in choices if len(text) <= room), "")


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
        room = self.console.width - fixed_width(self.console) - max(0, _counts_width(task) - COUNTS_WIDTH)
        return Text(fit(task.fields.get("stats") or (), room), no_wrap=True)


PLAIN_EVERY_S = 10.0
"""How often a task's plain progress line is repeated when stderr is not a terminal."""


class PlainProgress(Progress):
    """Progress for a stderr that is not a terminal (a CI log, a pipe, a file): no live redraw, which such a stream
    cannot show (rich then prints nothing until the end), but a plain line per task when it starts, at most every
    PLAIN_EVERY_S seconds while it moves, when it completes and when the display stops: "simulating 12/20 | turns
    48 | rejections 3 | tokens 20140 | cost unknown"."""

    def __init__(self, *columns: Any, **kwargs: Any) -> None:
        super().__init__(*columns, **{**kwargs, "disable": True})
        self.plain_target: Console = kwargs.get("console") or console
        self._printed: dict[TaskID, tuple[float, str]] = {}

    def update(self, task_id: TaskID, **kwargs: Any) -> None:
        super().update(task_id, **kwargs)
        self._line(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._line(task_id)

    def stop(self) -> None:
        for task_id in list(self._tasks):
            self._line(task_id, force=True)
        # not Progress.stop: its live display never started, and it ends a non-terminal stream with a blank line

    def _line(self, task_id: TaskID, force: bool = False) -> None:
        task = self._tasks.get(task_id)
        if task is None:
            return
        total = "" if task.total is None else f"/{task.total:.0f}"
        stats = task.fields.get("stats") or ()
        text = " | ".join([f"{task.description} {task.completed:.0f}{total}", *([stats[0]] if stats else [])])
        now = time.monotonic()
        last = self._printed.get(task_id)
        done = task.total is not None and task.completed >= task.total
        if last is not None and last[1] == text:
            return  # nothing new to say
        if last is None and not stats and not (force or done):
            return  # a task's first line waits for its figures (they follow at once)
        if not force and last is not None and not done and now - last[0] < PLAIN_EVERY_S:
            return
        self._printed[task_id] = (now, text)
        self.plain_target.print(text, markup=False, highlight=False, soft_wrap=True)


def progress_display(target: Console | None = None) -> Progress:
    """The live progress lines, on ``target`` (default: stderr); plain lines when it is not a terminal."""
    target = target or console
    kind = Progress if target.is_terminal else PlainProgress
    return kind(
        SpinnerColumn(table_column=Column(width=1, no_wrap=True)),
        TextColumn("[bold]{task.description}", table_column=Column(width=LABEL_WIDTH, no_wrap=True)),
        BarColumn(bar_width=bar_width(target), table_column=Column(width=bar_width(target), no_wrap=True)),
        MofNCompleteColumn(table_column=Column(min_width=COUNTS_WIDTH, no_wrap=True)),
        TimeElapsedColumn(table_column=Column(min_width=ELAPSED_WIDTH, no_wrap=True)),
        StatsColumn(target),
        console=target,
        transient=False,
    )


def token_total(totals: Totals) -> str:
    """Prompt plus completion tokens, or "unknown" (an imported run's source did not record them)."""
    if totals.prompt_tokens is None or totals.completion_tokens is None:
        return "unknown"
    return str(totals.prompt_tokens + totals.completion_tokens)


def short_count(n: int) -> str:
    """12, 20.1k, 1.23M: a count in at most 5 cells."""
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k" if n < 100_000 else f"{n // 1000}k"
    return f"{n / 1_000_000:.3g}M"


def simulation_stats(turns: int, rejections: int, categories: Counter[str], totals: Totals) -> list[str]:
    """Richest first: everything with the rejections by category; then without them; then every figure
    abbreviated (an 80-column terminal); then fewer parts. Never a figure cut in the middle."""
    cost = "unknown" if totals.cost_usd is None else f"${totals.cost_usd:.4f}"
    tokens = token_total(totals)
    parts = [
        f"turns {turns}",
        f"rejections {rejections}",
        f"tokens {tokens}",
        f"cost {cost}",
    ]
    short = [
        f"{turns} turns",
        f"{rejections} rej",
        f"{short_count(int(tokens)) if tokens.isdigit() else '?'} tok",
        cost if totals.cost_usd is not None else "$?",
    ]
    choices = [" | ".join(parts), ", ".join(short)]
    choices += [", ".join(short[:n]) for n in range(len(short) - 1, 0, -1)]
    if categories:
        by_category = ", ".join(f"{name} {n}" for name, n in categories.most_common())
        choices.insert(0, " | ".join([parts[0], f"{parts[1]} ({by_category})", *parts[2:]]))
    return choices


class ProgressObserver:
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
        self.totals, self.turns, self.rejections = totals, totals.turns, totals.rejections or 0
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

    def settle(self, totals: Totals) -> None:
        """The final figures, as the run's last line gives them: turns of conversations that did not finish
        are not kept, so they no longer count."""
        self.totals, self.turns = totals, totals.turns
        if totals.rejections is not None:
            self.rejections = totals.rejections
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

    def start(self, total: int | None, done: int) -> None:
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


def describe_outcome(status: str, t: Totals) -> str:
    """The one line a simulation ends with: status and what it wrote and spent."""
    cost = "unknown" if t.cost_usd is None else f"${t.cost_usd:.4f}"
    return (
        f"{status}: {t.conversations} conversations, {t.turns} turns, "
        f"{'unknown' if t.rejections is None else t.rejections} rejections, "
        f"{t.errors} errors, {token_total(t)} tokens, cost {cost}"
    )


def print_scoring(result: ScoringResult, on: Console) -> None:
    """What a scoring pass did: `run` says it on stderr with its progress, `evaluate` on stdout."""
    on.print(
        f"{result.written} scores written ({result.unscored} unscored), {result.skipped} already scored, "
        f"{result.judge_calls} judge calls",
        markup=False,
    )
    for note in result.notes:
        on.print(f"note: {note}", markup=False)


GROUPINGS = ("turn", "question_type", "persona")

SMALL_N = 10
"""Fewer scored items than this and a mean says next to nothing: most metrics are binary or near it, and even at
n = 10 a binary metric's 95 % interval is about +-0.3 wide; at n = 1 or 2 the bootstrap CI collapses to a point
(`1.000 [1.000, 1.000]`) that looks certain and is not. Such rows are marked, and a note says so in words."""
SMALL_N_NOTE = (
    f"* fewer than {SMALL_N} scored items: too few for the mean or its CI to mean anything; "
    "score more conversations before reading these as findings"
)


KINDS_COLUMN_WIDTH = 120
"""Below this many columns the unscored kinds leave the table for lines under it: a narrow column would fold the
kind codes mid-word."""


def _kinds_in_table() -> bool:
    return out.width >= KINDS_COLUMN_WIDTH


def _summary_table(title: str, first: str) -> Table:
    table = Table(title=title, box=box.SIMPLE, pad_edge=False, title_justify="left")
    for name, justify in ((first, "left"), ("mean", "right"), ("95% CI", "right"), ("scored", "right")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("unscored", justify="right", no_wrap=True)
    if _kinds_in_table():
        table.add_column("unscored by kind")  # wrapped between kinds (", "), never inside one
    return table


def _kinds(s: MetricSummary) -> str:
    # every kind with its count (a handful of stable codes), never the free text cut to fit
    return ", ".join(f"{kind} {n}" for kind, n in s.unscored_reasons.most_common())


def too_small(s: MetricSummary) -> bool:
    return s.mean is not None and s.n_scored < SMALL_N


def _row(label: str, s: MetricSummary) -> list[str]:
    """The mean carries its n beside it; a mean over too few items is starred (see SMALL_N)."""
    mark = " *" if too_small(s) else ""
    ci = f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]{mark}" if s.ci else "-"
    mean = f"{s.mean:.3f} (n={s.n_scored}){mark}" if s.mean is not None else "- (n=0)"
    row = [label, mean, ci, str(s.n_scored), str(s.n_unscored)]
    return [*row, _kinds(s)] if _kinds_in_table() else row


def _print(table: Table, summaries: list[MetricSummary], labels: list[str] | None = None) -> None:
    out.print(table)
    if not _kinds_in_table():  # the kinds under the table, one line per row that has any
        for label, s in zip(labels or [s.metric for s in summaries], summaries, strict=True):
            if s.unscored_reasons:
                out.print(f"unscored {label}: {_kinds(s)}", markup=False)
    if any(too_small(s) for s in summaries):
        out.print(SMALL_N_NOTE, markup=False)


def _lower_is_better(run: RunScores) -> frozenset[str]:
    """The built-in metrics that improve downwards (the registry's) and the run's own declared so."""
    from ..api.results import lower_is_better

    return lower_is_better() | run.lower_is_better


def print_summary(run: RunScores, metrics: list[str] | None = None) -> None:
    """Per metric: mean of scored items with its n, clustered 95 % CI, scored and unscored counts, and a plain
    note when a mean rests on too few items to mean anything."""
    table = _summary_table(f"{run.name}: per-metric summary (unscored items are not in the mean)", "metric")
    summaries = summarize_run(run, metrics)
    for s in summaries:
        table.add_row(*_row(s.metric, s))
    _print(table, summaries)
    downwards = [s.metric for s in summaries if s.metric in _lower_is_better(run)]
    if downwards:  # said once under the table, so the rows stay as scripts read them
        out.print(f"lower is better: {', '.join(downwards)}", markup=False)
    if run.left_out:
        out.print(
            f"{run.left_out} whole-conversation scores of conversations in error are not in the means "
            "(those conversations did not finish; --resume redoes them)",
            markup=False,
        )


def print_grouped(run: RunScores, by: str, metrics: list[str] | None = None) -> None:
    for metric, groups in summarize_by(run, by, metrics).items():
        table = _summary_table(f"{metric} by {by.replace('_', ' ')}", by)
        for group, s in groups.items():
            table.add_row(*_row(group, s))
        _print(table, list(groups.values()), list(groups))
