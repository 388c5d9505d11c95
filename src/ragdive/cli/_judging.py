"""What `evaluate`, `static` and `run` share on screen: the summary tables. (Building the judge is in
`ragdive.pipeline`.)"""

from __future__ import annotations

import sys

from rich import box
from rich.console import Console
from rich.table import Table

from ..evaluation.stats import MetricSummary, RunScores, summarize_by, summarize_run

# a pipe gets 160 columns, not rich's 80, so tables are not truncated in logs and tests
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


GROUPINGS = ("turn", "question_type", "persona")


def _summary_table(title: str, first: str) -> Table:
    table = Table(title=title, box=box.SIMPLE, pad_edge=False, title_justify="left")
    for name, justify in ((first, "left"), ("mean", "right"), ("95% CI", "right"), ("scored", "right")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("unscored", justify="right", no_wrap=True)
    table.add_column("most common unscored reason", overflow="fold")
    return table


def _row(label: str, s: MetricSummary) -> list[str]:
    ci = f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]" if s.ci else "-"
    top = s.unscored_reasons.most_common(1)
    reason = f"{top[0][0]} ({top[0][1]})" if top else ""
    mean = f"{s.mean:.3f}" if s.mean is not None else "-"
    return [label, mean, ci, str(s.n_scored), str(s.n_unscored), reason]


def print_summary(run: RunScores, metrics: list[str] | None = None) -> None:
    """Per metric: mean of scored items, clustered 95 % CI, scored and unscored counts."""
    table = _summary_table(f"{run.name}: per-metric summary (unscored items are not in the mean)", "metric")
    for s in summarize_run(run, metrics):
        table.add_row(*_row(s.metric, s))
    console.print(table)


def print_grouped(run: RunScores, by: str, metrics: list[str] | None = None) -> None:
    for metric, groups in summarize_by(run, by, metrics).items():
        table = _summary_table(f"{metric} by {by.replace('_', ' ')}", by)
        for group, s in groups.items():
            table.add_row(*_row(group, s))
        console.print(table)
