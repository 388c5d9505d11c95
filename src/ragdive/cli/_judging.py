"""What `evaluate`, `static` and `run` share on screen: the summary tables. (Building the judge is in
`ragdive.pipeline`.)"""

from __future__ import annotations

import sys

from rich import box
from rich.console import Console
from rich.table import Table

from ..analysis import MetricSummary, RunScores, summarize_by, summarize_run

# a pipe gets 160 columns, not rich's 80, so tables are not truncated in logs and tests
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


GROUPINGS = ("turn", "question_type", "persona")

SMALL_N = 10
"""Fewer scored items than this and a mean says next to nothing: most metrics are binary or near it, and even at
n = 10 a binary metric's 95 % interval is about +-0.3 wide; at n = 1 or 2 the bootstrap CI collapses to a point
(`1.000 [1.000, 1.000]`) that looks certain and is not. Such rows are marked, and a note says so in words."""
SMALL_N_NOTE = (
    f"* fewer than {SMALL_N} scored items: too few for the mean or its CI to mean anything; "
    "score more conversations before reading these as findings"
)


def _summary_table(title: str, first: str) -> Table:
    table = Table(title=title, box=box.SIMPLE, pad_edge=False, title_justify="left")
    for name, justify in ((first, "left"), ("mean", "right"), ("95% CI", "right"), ("scored", "right")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("unscored", justify="right", no_wrap=True)
    table.add_column("most common unscored reason", overflow="fold")
    return table


def too_small(s: MetricSummary) -> bool:
    return s.mean is not None and s.n_scored < SMALL_N


def _row(label: str, s: MetricSummary) -> list[str]:
    """The mean carries its n beside it; a mean over too few items is starred (see SMALL_N)."""
    mark = " *" if too_small(s) else ""
    ci = f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]{mark}" if s.ci else "-"
    top = s.unscored_reasons.most_common(1)
    reason = f"{top[0][0]} ({top[0][1]})" if top else ""
    mean = f"{s.mean:.3f} (n={s.n_scored}){mark}" if s.mean is not None else "- (n=0)"
    return [label, mean, ci, str(s.n_scored), str(s.n_unscored), reason]


def _print(table: Table, summaries: list[MetricSummary]) -> None:
    console.print(table)
    if any(too_small(s) for s in summaries):
        console.print(SMALL_N_NOTE, markup=False)


def print_summary(run: RunScores, metrics: list[str] | None = None) -> None:
    """Per metric: mean of scored items with its n, clustered 95 % CI, scored and unscored counts, and a plain
    note when a mean rests on too few items to mean anything."""
    table = _summary_table(f"{run.name}: per-metric summary (unscored items are not in the mean)", "metric")
    summaries = summarize_run(run, metrics)
    for s in summaries:
        table.add_row(*_row(s.metric, s))
    _print(table, summaries)


def print_grouped(run: RunScores, by: str, metrics: list[str] | None = None) -> None:
    for metric, groups in summarize_by(run, by, metrics).items():
        table = _summary_table(f"{metric} by {by.replace('_', ' ')}", by)
        for group, s in groups.items():
            table.add_row(*_row(group, s))
        _print(table, list(groups.values()))
