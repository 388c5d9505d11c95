"""A sweep's tables, as the paper lays its results out (records in, numbers out):

- Table 2: the baseline cell's repeats: mean, std, min, max of the per-run means and a clustered 95 % CI
  (analysis/repeats.py, the aggregation that reproduces the paper's Table 2 from its stored scores).
- Table 4: every other cell's mean against the baseline's min–max band over its repeats; ``outside_band`` is the
  paper's ``*`` ("values outside the min–max range of the consistency baseline").
- Table 5: per cell and metric, the dynamic value beside the static-arm value. The paper's arrows do not compare
  static with dynamic: its baseline row carries none although DIVE and SQuAD differ there by up to 0.32
  (faithfulness 0.61 vs 0.93), and "Number of Chunks: 1" marks faithfulness ↓ in both columns (0.61 -> 0.44 and
  0.93 -> 0.85). Each column's arrow compares the configuration with the baseline row *of the same method*. So
  ``arrow``/``better`` is the dynamic value against the baseline cell's dynamic value, and
  ``static_arrow``/``static_better`` the static value against the baseline cell's static value.

The result is the tables.json contract the HTML report renders (null where a value is unknown).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..records.sweep_tables import SweepTables
from .arrows import ArrowRule, better
from .pass_k import Threshold, pass_k
from .repeats import RepeatSummary, summarize_repeats
from .summary import RunScores


@dataclass
class CellRuns:
    cell: str
    axes: dict[str, Any]
    runs: list[tuple[str, RunScores]] = field(default_factory=list)
    """(run id, scores) of the cell's finished dynamic runs, one per repeat."""
    static: tuple[str, RunScores] | None = None
    """The cell's finished static-arm run."""


def _metrics(cells: list[CellRuns], baseline: CellRuns) -> list[str]:
    """Metric names in the order the baseline's runs wrote them, then any others."""
    ordered = [baseline, *cells]
    names = [m for c in ordered for _, r in c.runs for m in r.metrics()]
    names += [m for c in ordered if c.static for m in c.static[1].metrics()]
    return list(dict.fromkeys(names))


def _summaries(runs: list[RunScores], metrics: list[str], seed: int) -> dict[str, RepeatSummary]:
    return {s.metric: s for s in summarize_repeats(runs, metrics, seed=seed)} if runs else {}


def _mean(summary: dict[str, RepeatSummary], metric: str) -> float | None:
    s = summary.get(metric)
    return s.mean if s is not None else None


def build_tables(
    sweep: str,
    cells: list[CellRuns],
    baseline: str,
    *,
    directions: Mapping[str, str],
    rule: ArrowRule | None = None,
    seed: int = 0,
    thresholds: list[Threshold] | None = None,
) -> dict[str, Any]:
    """``directions``: metric name -> "higher" or "lower" (from the metric registry, which this package does not
    import); a metric not named is higher-is-better. ``thresholds``: what a conversation must reach to pass, for
    pass^k over each cell's repeats (none: no pass^k table)."""
    rule = rule or ArrowRule()
    base = next(c for c in cells if c.cell == baseline)
    metrics = _metrics(cells, base)
    dynamic = {c.cell: _summaries([r for _, r in c.runs], metrics, seed) for c in cells}
    static = {c.cell: _summaries([c.static[1]], metrics, seed) for c in cells if c.static}
    tables: dict[str, Any] = {
        "sweep": sweep,
        "baseline": baseline,
        "arrow_rule": str(rule),
        "metrics": [{"name": m, "direction": directions.get(m, "higher")} for m in metrics],
        "cells": [
            {
                "cell": c.cell,
                "axes": c.axes,
                "runs": [run_id for run_id, _ in c.runs],
                "static_run": c.static[0] if c.static else None,
            }
            for c in cells
        ],
        "table2": _table2(base, dynamic[baseline], metrics),
        "table4": {
            "rows": _table4(cells, baseline, dynamic, metrics, rule),
            # the footnote's facts, from the baseline's repeats (not from whichever metric's row comes first)
            "baseline_repeats": len(base.runs),
            "rule": rule.comparison(),
        },
    }
    if thresholds:
        tables["pass_k"] = _pass_k_table(cells, thresholds)
    if static:
        tables["table5"] = {"rows": _table5(cells, baseline, dynamic, static, metrics, directions, rule)}
    SweepTables.model_validate(tables)  # the report's own schema: a table it could not read is never written
    return tables


def _table2(base: CellRuns, summary: dict[str, RepeatSummary], metrics: list[str]) -> dict[str, Any]:
    rows = []
    for metric in metrics:
        s = summary.get(metric)
        rows.append(
            {
                "metric": metric,
                "n": len(s.run_means) if s else 0,
                "mean": s.mean if s else None,
                "std": s.std if s else None,
                "min": s.min if s else None,
                "max": s.max if s else None,
                "ci_low": s.ci[0] if s and s.ci else None,
                "ci_high": s.ci[1] if s and s.ci else None,
            }
        )
    return {"cell": base.cell, "repeats": len(base.runs), "rows": rows}


def _table4(
    cells: list[CellRuns],
    baseline: str,
    dynamic: dict[str, dict[str, RepeatSummary]],
    metrics: list[str],
    rule: ArrowRule,
) -> list[dict[str, Any]]:
    rows = []
    for cell in cells:
        if cell.cell == baseline:
            continue
        for metric in metrics:
            b = dynamic[baseline].get(metric)
            # a band needs two baseline runs at least: one run has no spread to fall outside of
            band = (b.min, b.max) if b is not None and len(b.run_means) >= 2 else (None, None)
            mean = _mean(dynamic[cell.cell], metric)
            outside = rule.outside(mean, band[0], band[1])
            rows.append(
                {
                    "cell": cell.cell,
                    "metric": metric,
                    "mean": mean,
                    "band_min": band[0],
                    "band_max": band[1],
                    "outside_band": bool(outside),
                }
            )
    return rows


def _table5(
    cells: list[CellRuns],
    baseline: str,
    dynamic: dict[str, dict[str, RepeatSummary]],
    static: dict[str, dict[str, RepeatSummary]],
    metrics: list[str],
    directions: Mapping[str, str],
    rule: ArrowRule,
) -> list[dict[str, Any]]:
    rows = []
    for cell in cells:
        for metric in metrics:
            direction = directions.get(metric, "higher")
            dyn = _mean(dynamic[cell.cell], metric)
            sta = _mean(static.get(cell.cell, {}), metric)
            own = cell.cell == baseline  # the baseline row is what the others are compared with: no arrows
            arrow = "" if own else rule.arrow(_mean(dynamic[baseline], metric), dyn)
            static_arrow = "" if own else rule.arrow(_mean(static.get(baseline, {}), metric), sta)
            rows.append(
                {
                    "cell": cell.cell,
                    "metric": metric,
                    "dynamic": dyn,
                    "static": sta,
                    "arrow": arrow,
                    "better": better(arrow, direction),
                    "static_arrow": static_arrow,
                    "static_better": better(static_arrow, direction),
                }
            )
    return rows


def _pass_k_table(cells: list[CellRuns], thresholds: list[Threshold]) -> dict[str, Any]:
    """pass^k for k = 1..repeats per cell (analysis/pass_k.py), one row per (cell, k)."""
    rows = []
    for cell in cells:
        result = pass_k([r for _, r in cell.runs], thresholds)
        for k, value, n in zip(result.k, result.values, result.n_documents, strict=True):
            row = {"cell": cell.cell, "k": k, "value": value, "n_documents": n}
            rows.append({**row, "undetermined": result.undetermined})
    return {"thresholds": [str(t) for t in thresholds], "rows": rows}


TABLE_COLUMNS = {
    "table2": ["metric", "n", "mean", "std", "min", "max", "ci_low", "ci_high"],
    "table4": ["cell", "metric", "mean", "band_min", "band_max", "outside_band"],
    "pass_k": ["cell", "k", "value", "n_documents", "undetermined"],
    "table5": ["cell", "metric", "dynamic", "static", "arrow", "better", "static_arrow", "static_better"],
}


def tables_csv(tables: dict[str, Any]) -> dict[str, str]:
    """``table2.csv``, ``table4.csv`` and (with a static arm) ``table5.csv`` as text; unknown values are empty."""
    out = {}
    for name, columns in TABLE_COLUMNS.items():
        if name not in tables:
            continue
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in tables[name]["rows"]:
            writer.writerow({k: "" if row.get(k) is None else row[k] for k in columns})
        out[f"{name}.csv"] = buffer.getvalue()
    return out
