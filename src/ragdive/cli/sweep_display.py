"""What `ragdive sweep` shows: the dry run's cells and call estimate, one line per run, and Tables 2, 4 and 5 (read
from the tables.json data, so the terminal shows exactly what the report renders). Printed on display's
consoles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table

from .display import out

if TYPE_CHECKING:
    from ..api.sweeps import SweepPlan


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_plan(plan: SweepPlan, estimate: dict[str, tuple[int, int]]) -> None:
    sweep = plan.sweep
    table = Table(title=f"{len(plan.cells)} cells × {sweep.repeats} repeats", box=box.SIMPLE, pad_edge=False)
    for col in ("#", "cell", "runs"):
        table.add_column(col, justify="right" if col == "#" else "left", overflow="fold")
    for cell in plan.cells:
        runs = [r.run_id for r in plan.runs if r.cell is cell]
        mark = " (baseline)" if cell is plan.baseline else ""
        table.add_row(str(cell.index), cell.id + mark, " ".join(runs))
    out.print(table)
    calls = Table(title="estimated model calls", box=box.SIMPLE, pad_edge=False)
    for col in ("role", "fewest", "most"):
        calls.add_column(col, justify="left" if col == "role" else "right")
    for role, (low, high) in estimate.items():
        calls.add_row(role, str(low), str(high))
    out.print(calls)
    out.print(
        "fewest: every draft accepted at once; most: every turn uses all its attempts. The judge is one call per "
        "item and metric (batched prompts can need fewer).",
        markup=False,
    )


def _metric_label(name: str, tables: dict[str, Any]) -> str:
    lower = any(m["name"] == name and m["direction"] == "lower" for m in tables["metrics"])
    return name + (" (lower is better)" if lower else "")


def print_tables(tables: dict[str, Any]) -> None:
    t2 = tables["table2"]
    table = Table(title=f"Table 2: baseline {t2['cell']}, {t2['repeats']} repeats", box=box.SIMPLE, pad_edge=False)
    for col in ("metric", "runs", "mean", "std", "min", "max", "95% CI"):
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    for r in t2["rows"]:
        ci = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if r["ci_low"] is not None else "-"
        table.add_row(
            _metric_label(r["metric"], tables),
            str(r["n"]),
            _fmt(r["mean"]),
            _fmt(r["std"]),
            _fmt(r["min"]),
            _fmt(r["max"]),
            ci,
        )
    out.print(table)
    _print_table4(tables)
    if "table5" in tables:
        _print_table5(tables)


def _grid(rows: list[dict[str, Any]], value: Any) -> tuple[list[str], dict[str, dict[str, str]]]:
    cells = list(dict.fromkeys(r["cell"] for r in rows))
    grid: dict[str, dict[str, str]] = {c: {} for c in cells}
    for r in rows:
        grid[r["cell"]][r["metric"]] = value(r)
    return cells, grid


def _print_table4(tables: dict[str, Any]) -> None:
    rows = tables["table4"]["rows"]
    metrics = [m["name"] for m in tables["metrics"]]
    table = Table(title="Table 4: cells vs the baseline's min–max band", box=box.SIMPLE, pad_edge=False)
    table.add_column("cell", overflow="fold")
    for m in metrics:
        table.add_column(m, justify="right", no_wrap=True)
    bands = {r["metric"]: r for r in rows}
    for label, key in (("base min", "band_min"), ("base max", "band_max")):
        table.add_row(label, *(_fmt(bands[m][key]) if m in bands else "-" for m in metrics))
    cells, grid = _grid(rows, lambda r: _fmt(r["mean"]) + ("*" if r["outside_band"] else ""))
    for cell in cells:
        table.add_row(cell, *(grid[cell].get(m, "-") for m in metrics))
    out.print(table)
    for line in table4_notes(tables):
        out.print(line, markup=False)


def table4_notes(tables: dict[str, Any]) -> list[str]:
    """Table 4's footnotes, decided by the baseline's repeats (and, per metric, whether it has a band), never by
    which row happens to come first."""
    t4 = tables["table4"]
    rows = t4["rows"]
    repeats = t4.get("baseline_repeats", tables["table2"]["repeats"])
    if repeats < 2:
        return ["note: the baseline has fewer than 2 finished repeats, so there is no band (no `*`)"]
    compared = f" (compared {t4['rule']})" if t4.get("rule") else ""
    notes = [f"* outside the baseline's min–max band over its {repeats} repeats{compared}"]
    bandless = sorted({r["metric"] for r in rows if r["band_min"] is None})
    if bandless:
        notes.append(f"no band (fewer than 2 repeats scored it): {', '.join(bandless)}")
    return notes


def _arrow(arrow: str, good: bool | None) -> str:
    if not arrow:
        return ""
    return f" {arrow}{'+' if good else '−'}"


def _print_table5(tables: dict[str, Any]) -> None:
    rows = tables["table5"]["rows"]
    metrics = [m["name"] for m in tables["metrics"]]
    table = Table(title="Table 5: dynamic | static per cell", box=box.SIMPLE, pad_edge=False)
    table.add_column("cell", overflow="fold")
    for m in metrics:
        table.add_column(m, justify="right", no_wrap=True)

    def shown(r: dict[str, Any]) -> str:
        dynamic = _fmt(r["dynamic"]) + _arrow(r["arrow"], r["better"])
        static = _fmt(r["static"]) + _arrow(r["static_arrow"], r["static_better"])
        return f"{dynamic} | {static}"

    cells, grid = _grid(rows, shown)
    for cell in cells:
        table.add_row(cell, *(grid[cell].get(m, "-") for m in metrics))
    out.print(table)
    rule = tables["arrow_rule"] + (f"; {tables['table4']['rule']}" if tables["table4"].get("rule") else "")
    out.print(
        f"↑/↓: a change against the baseline row in the same column ({rule}); + better, − worse for that metric",
        markup=False,
    )
