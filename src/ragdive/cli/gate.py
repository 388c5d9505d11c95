"""`ragdive gate RUN|SWEEP`: fail a CI build when a metric misses its threshold or drops beyond noise."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.table import Table

from ..errors import ConfigError
from .display import out


def gate_cmd(
    target: str = typer.Argument(..., help="A run directory, repeats of one configuration (a,b,c), or a sweep."),
    minimum: list[str] = typer.Option([], "--min", help="METRIC=VALUE: the metric's mean must be >= VALUE."),
    maximum: list[str] = typer.Option([], "--max", help="METRIC=VALUE: the metric's mean must be <= VALUE."),
    baseline: str | None = typer.Option(None, "--baseline", help="The run (or a,b,c) drops are measured from."),
    max_drop: list[str] = typer.Option(
        [], "--max-drop", help="METRIC=DROP: the largest drop from --baseline that passes (outside noise)."
    ),
    junit: Path | None = typer.Option(None, "--junit", help="Write JUnit XML: one test case per check."),
    summary_md: Path | None = typer.Option(
        None, "--summary-md", help="Write a Markdown summary (for $GITHUB_STEP_SUMMARY)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON (schema ragdive.gate)."),
) -> None:
    """Check thresholds: --min/--max, else the run's evaluation.gate. With --baseline and --max-drop, a drop
    fails only when the paired test's 95% CI of the change excludes 0 (not on noise). Exit 0: passed; 6: a check
    failed; 2: no threshold anywhere or bad input. A --min/--max value may add 'per turn', 'per conversation' or
    'in at least K of N repeats'."""
    from .. import api
    from ..config.gate import bound_rules, metric_drops

    try:
        rules = {m: [str(r) for r in rs] for m, rs in bound_rules(minimum, maximum).items()}
        drops = metric_drops(max_drop)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    result = api.gate(target, rules, baseline=baseline, max_drop=drops)
    finish_gate(result, junit=junit, summary_md=summary_md, as_json=as_json)


def finish_gate(result: object, *, junit: Path | None, summary_md: Path | None, as_json: bool) -> None:
    """Write the requested files, print the verdict (a table, or the JSON document), exit 6 on a failed check."""
    from ..gate import EXIT_GATE_FAILED, GateResult, gate_json, write_junit, write_markdown
    from ..records.outputs import dump

    assert isinstance(result, GateResult)
    if junit is not None:
        write_junit(result, junit)
    if summary_md is not None:
        write_markdown(result, summary_md)
    if as_json:
        print(dump(gate_json(result)))
    else:
        print_gate(result)
    if not result.passed:
        raise typer.Exit(EXIT_GATE_FAILED)


def print_gate(result: object) -> None:
    from ..gate import GateResult

    assert isinstance(result, GateResult)
    table = Table(box=box.SIMPLE, pad_edge=False, title="gate", title_justify="left")
    table.add_column("", no_wrap=True)
    table.add_column("check", overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("detail", overflow="fold", ratio=1)
    groups = {c.group for c in result.checks}
    for c in result.checks:
        name = c.name if len(groups) == 1 else f"{c.group}: {c.name}"
        value = "unknown" if c.value is None else f"{c.value:.3f}"
        detail = c.detail
        if c.worst:
            detail += "; worst: " + ", ".join(f"{w.conversation_id} ({w.value:.2f})" for w in c.worst)
        table.add_row("ok" if c.passed else "FAIL", name, value, detail)
    out.print(table)
    failed = len(result.failures)
    verdict = "gate passed" if result.passed else f"gate failed: {failed} of {len(result.checks)} checks"
    out.print(f"{verdict} ({len(result.checks)} checks)" if result.passed else verdict, markup=False)
