"""A made-up sweep directory for the sweep report's tests: a tables.json in the sweep command's contract (four
history policies, the baseline repeated three times, a static arm), with one real run report among the runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragdive.store import RunStore
from tests.factories import make_conversation
from tests.report_runs import write_scripted_run

HOSTILE_AXIS = "<img src=x onerror=alert(3)>"
REPORTED_RUN = "20260101-000000-report"  # the run write_scripted_run creates: it gets a real report.html

METRICS = [
    {"name": "context_retention", "direction": "higher"},
    {"name": "forgetfulness", "direction": "lower"},
    {"name": "correctness", "direction": "higher"},
]
CELLS = [
    {"cell": "c0", "axes": {"target.history": "full", "target.top_k": 10}, "runs": [REPORTED_RUN, "r-c0-1", "r-c0-2"]},
    {"cell": "c1", "axes": {"target.history": "none", "target.top_k": 10}, "runs": ["r-c1-0"], "static_run": "s-c1"},
    {"cell": "c2", "axes": {"target.history": "first", "target.top_k": 10}, "runs": ["r-c2-0"]},
    {"cell": "c3", "axes": {"target.history": HOSTILE_AXIS, "target.top_k": 10}, "runs": ["r-c3-0"]},
]
# (mean per metric, outside the band?) per cell, in METRICS order; the band is the baseline's min..max
BAND = {"context_retention": (0.96, 1.0), "forgetfulness": (0.06, 0.12), "correctness": (0.94, 0.98)}
TABLE4 = {
    "c0": [(0.98, False), (0.08, False), (0.96, False)],
    "c1": [(0.73, True), (0.63, True), (0.85, True)],
    "c2": [(0.91, True), (0.19, True), (0.95, False)],
    "c3": [(0.99, False), (0.06, False), (0.97, False)],
}
# (dynamic, static, arrow, better, static_arrow, static_better) per cell and metric: each arrow compares with the
# baseline cell's value of its own column (the paper's Table 5); None where unknown (no static score for the
# conversation metrics; a direction nobody declared); c3's rows have no static arrow fields at all (an older
# writer of the contract)
TABLE5: dict[str, list[tuple[Any, ...]]] = {
    "c0": [(0.98, None, "", None, "", None), (0.08, None, "", None, "", None), (0.96, 0.99, "", None, "", None)],
    "c1": [
        (0.73, None, "↓", False, "", None),
        (0.63, None, "↑", False, "", None),
        (0.85, 0.92, "↓", False, "↓", False),
    ],
    "c2": [(0.91, None, "↓", False, "", None), (0.19, None, "↑", None, "", None), (0.95, 0.92, "", None, "↓", None)],
    "c3": [(0.99, None, "", None), (0.06, None, "", None), (0.90, 1.0, "↓", False)],
}
TABLE5_FIELDS = ("dynamic", "static", "arrow", "better", "static_arrow", "static_better")


def tables(static: bool = True) -> dict[str, Any]:
    names = [m["name"] for m in METRICS]
    doc: dict[str, Any] = {
        "sweep": "history <b>policies</b>",
        "baseline": "c0",
        "arrow_rule": "absolute:0.05",
        "metrics": METRICS,
        "cells": CELLS,
        "table2": {
            "cell": "c0",
            "repeats": 3,
            "rows": [
                {
                    "metric": "context_retention",
                    "n": 30,
                    "mean": 0.98,
                    "std": 0.01,
                    "min": 0.96,
                    "max": 1.0,
                    "ci_low": 0.955,
                    "ci_high": 1.0,
                },
                {
                    "metric": "forgetfulness",
                    "n": 30,
                    "mean": 0.08,
                    "std": 0.02,
                    "min": 0.06,
                    "max": 0.12,
                    "ci_low": 0.031,
                    "ci_high": 0.129,
                },
                {
                    "metric": "correctness",
                    "n": 150,
                    "mean": 0.96,
                    "std": None,
                    "min": 0.94,
                    "max": 0.98,
                    "ci_low": None,
                    "ci_high": None,
                },
            ],
        },
        "table4": {
            "rows": [
                {
                    "cell": cell,
                    "metric": m,
                    "mean": mean,
                    "band_min": BAND[m][0],
                    "band_max": BAND[m][1],
                    "outside_band": outside,
                }
                for cell, values in TABLE4.items()
                for m, (mean, outside) in zip(names, values, strict=True)
            ]
        },
    }
    if static:
        doc["table5"] = {
            "rows": [
                {"cell": cell, "metric": m, **dict(zip(TABLE5_FIELDS, row, strict=False))}
                for cell, values in TABLE5.items()
                for m, row in zip(names, values, strict=True)
            ]
        }
    return doc


def write_sweep_dir(root: Path, static: bool = True) -> Path:
    """root/sweep with sweep.json, tables.json and runs/: REPORTED_RUN finished with its report.html, r-c0-1
    failed (a repeat of it: the baseline's Table 3 is 0 % unique at turn 1, 100 % at turn 2), r-c0-2 has an
    unreadable manifest, the other cells' runs have no directory."""
    from ragdive.report import write_report

    sweep = root / "sweep"
    (sweep / "runs").mkdir(parents=True)
    (sweep / "sweep.json").write_text(json.dumps({"sweep": "history policies"}), encoding="utf-8")
    (sweep / "tables.json").write_text(json.dumps(tables(static), ensure_ascii=False), encoding="utf-8")
    write_report(write_scripted_run(sweep / "runs", conversations=2, turns=2))
    # a repeat of REPORTED_RUN without a report: the same seed documents and first questions, other second ones
    repeat = RunStore.create(sweep / "runs", run_id="r-c0-1", status="failed")
    for i in range(2):
        c = make_conversation(f"conv-{i}", turns=2, index=i)
        c.document_ids = [f"doc-{i}"]
        c.turns[1].standalone_question = f"another question {i}?"
        repeat.append_conversation(c)
    (sweep / "runs" / "r-c0-2" / "manifest.json").parent.mkdir()
    (sweep / "runs" / "r-c0-2" / "manifest.json").write_text("{torn", encoding="utf-8")
    # the other cells' runs were never started: no directory at all
    return sweep
