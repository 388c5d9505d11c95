"""The sweep report: one self-contained HTML file with the paper's Tables 2 to 5 for a sweep directory, and each
cell's runs with their status, linked to their own report.html where one was written.

Tables 2, 4 and 5 are a view of numbers the sweep command computed: nothing is recomputed here, so the page
and tables.json always agree (Table 3, uniqueness across a cell's repeats, is not in tables.json: see
sweep_uniqueness.py). The layout follows the paper's: Table 4 puts the baseline's band as two rows (min, max)
above the cells, one column per metric, `*` after a mean outside the band; Table 5 gives each metric a dynamic
and a static column, each value with the arrow of a large change from the baseline cell.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from ..analysis.conversations import DEFAULT_THRESHOLD, Embedder
from ..analysis.simulator_setup import setup_differences
from ..records.sweep_tables import SweepTables, parse_tables
from ..store import RunStore
from ..store.run import write_text_atomic
from ..store.sweep_report import SweepFiles
from .html import TEMPLATES, environment
from .pass_k_chart import pass_k_svg, pass_k_view
from .sweep_uniqueness import cell_uniqueness, turns_of


def _axis_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _label(axes: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_axis_value(v)}" for k, v in axes.items()) or "-"


def _ordered(first: list[str], seen: list[str]) -> list[str]:
    """The declared order, then anything the rows name that was not declared (shown, never dropped)."""
    return first + [x for x in dict.fromkeys(seen) if x not in first]


def sweep_view(
    tables: SweepTables,
    run_hrefs: dict[str, str | None],
    run_status: dict[str, str] | None = None,
    uniqueness: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the sweep page shows, pivoted the way the paper's tables are laid out."""
    axes = {c.cell: c.axes for c in tables.cells}
    rows4 = tables.table4.rows
    rows5 = tables.table5.rows if tables.table5 else []
    metrics = _ordered(
        [m.name for m in tables.metrics],
        [r.metric for r in tables.table2.rows] + [r.metric for r in rows4] + [r.metric for r in rows5],
    )
    cells = _ordered([c.cell for c in tables.cells], [r.cell for r in rows4] + [r.cell for r in rows5])

    def cell_view(cell: str) -> dict[str, Any]:
        return {"cell": cell, "label": _label(axes.get(cell, {})), "baseline": cell == tables.baseline}

    def run(run_id: str) -> dict[str, Any]:
        return {"id": run_id, "href": run_hrefs.get(run_id), "status": (run_status or {}).get(run_id)}

    band_min: dict[str, float | None] = {}
    band_max: dict[str, float | None] = {}
    for r in rows4:  # one band per metric: the baseline's repeats
        band_min.setdefault(r.metric, r.band_min)
        band_max.setdefault(r.metric, r.band_max)
    table4 = [
        {**cell_view(cell), "values": {r.metric: r for r in rows4 if r.cell == cell}}
        for cell in cells
        if any(r.cell == cell for r in rows4)
    ]
    table5 = [
        {**cell_view(cell), "values": {r.metric: r for r in rows5 if r.cell == cell}}
        for cell in cells
        if any(r.cell == cell for r in rows5)
    ]
    return {
        "name": tables.sweep,
        "baseline": cell_view(tables.baseline),
        "arrow_rule": tables.arrow_rule,
        "metrics": metrics,
        "directions": {m.name: m.direction for m in tables.metrics},
        "cells": [
            {
                **cell_view(c.cell),
                "axes": [(k, _axis_value(v)) for k, v in c.axes.items()],
                "runs": [run(r) for r in c.runs],
                "static_run": None if c.static_run is None else run(c.static_run),
            }
            for c in tables.cells
        ],
        "table2": {**cell_view(tables.table2.cell), "repeats": tables.table2.repeats, "rows": tables.table2.rows},
        "table4": {
            "band_min": band_min,
            "band_max": band_max,
            "rows": table4,
            "baseline_repeats": tables.table4.baseline_repeats,
            "rule": tables.table4.rule,
            "bandless": sorted({r.metric for r in rows4 if r.band_min is None}),
        },
        "table5": table5 if tables.table5 else None,
        "table3": [{**cell_view(u["cell"]), **u} for u in uniqueness or []],
        "pass_k": _pass_k(tables, cells, cell_view),
        "table3_turns": turns_of(uniqueness or []),
    }


def _pass_k(tables: SweepTables, cells: list[str], cell_view: Any) -> dict[str, Any] | None:
    if tables.pass_k is None:
        return None
    view = pass_k_view(tables.pass_k.rows, cells)
    for cell in view["cells"]:
        cell.update(cell_view(cell["cell"]))
    return {**view, "thresholds": tables.pass_k.thresholds, "chart": pass_k_svg(view)}


def render_sweep_report(view: dict[str, Any]) -> str:
    template = environment().get_template("sweep.html.j2")
    style = Markup((TEMPLATES / "report.css").read_text(encoding="utf-8"))  # noqa: S704 - our own file
    return template.render(view=view, style=style)


def write_sweep_report(
    sweep_dir: Path,
    path: Path | None = None,
    embed: Embedder | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> Path:
    """Write the sweep's report (default: report.html in the sweep directory) and return where it went.

    Each run's report is linked relative to where this file goes, so the links work once the sweep directory
    is copied elsewhere as a whole. ``embed`` is the same-question embedder for Table 3 (None: exact text, as
    a run's own report at the end of `ragdive run`)."""
    files = SweepFiles.open(sweep_dir)
    tables = parse_tables(files.read_tables(), str(files.tables_path))
    where = files.report_path if path is None else Path(path)
    inside = where.resolve() == files.report_path.resolve()
    hrefs: dict[str, str | None] = {}
    status: dict[str, str] = {}
    stores: dict[str, RunStore | None] = {}
    for cell in tables.cells:
        for run in [*cell.runs, *([cell.static_run] if cell.static_run else [])]:
            stores[run], status[run] = files.run_state(run)
            report = files.run_report(run)
            hrefs[run] = None if report is None else quote(Path(os.path.relpath(report, where.parent)).as_posix())
    uniqueness = cell_uniqueness(stores, tables, embed, threshold)
    view = sweep_view(tables, hrefs, status, uniqueness)
    # cells meant to differ in their target alone: say so first when their simulated user, validator or judge do too
    view["simulator_warnings"] = setup_differences(
        [(run, store.read_manifest().roles) for run, store in stores.items() if store is not None]
    )
    html = render_sweep_report(view)
    if inside:
        return files.write_report(html)  # inside the sweep: the store writes sweep files
    write_text_atomic(where, html)  # anywhere else the user asked for
    return where
