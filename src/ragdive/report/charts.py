"""The report's charts as plotly figure JSON (data + layout), drawn in the page by the one inlined plotly.js.

Figures travel as JSON in `<script type="application/json">` blocks rather than as plotly's own `to_html`
snippets, which write the figure into JavaScript code: here no data is ever part of a script.

They are written as plain dicts in plotly.js's figure format, not through plotly.py's graph objects: importing
plotly.graph_objects and validating three figures cost a run ~0.5 s after its last request (issue 27's tail). The
"plotly_white" template is plotly.py's, vendored as JSON (vendor/plotly_white.json; a test checks it against the
installed plotly.py, and that plotly.py accepts every figure made here unchanged).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

TEMPLATE_FILE = Path(__file__).parent / "vendor" / "plotly_white.json"
# plotly's "Reds" (ColorBrewer), as plotly.py writes a named colour scale out
REDS = [
    [0.0, "rgb(255,245,240)"],
    [0.125, "rgb(254,224,210)"],
    [0.25, "rgb(252,187,161)"],
    [0.375, "rgb(252,146,114)"],
    [0.5, "rgb(251,106,74)"],
    [0.625, "rgb(239,59,44)"],
    [0.75, "rgb(203,24,29)"],
    [0.875, "rgb(165,15,21)"],
    [1.0, "rgb(103,0,13)"],
]


@cache
def _template() -> dict[str, Any]:
    return dict(json.loads(TEMPLATE_FILE.read_text(encoding="utf-8")))


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
        "height": 320,
        "template": _template(),
        **extra,
    }


def curves_figure(curves: dict[str, list[dict[str, Any]]]) -> Any | None:
    """Mean of each per-turn metric by turn, with its 95 % CI as error bars."""
    if not curves:
        return None
    data = []
    for metric, points in curves.items():
        shown = [p for p in points if p["mean"] is not None]
        data.append(
            {
                "type": "scatter",
                "x": [p["turn"] for p in shown],
                "y": [p["mean"] for p in shown],
                "name": metric,
                "mode": "lines+markers",
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": [(p["ci"][1] - p["mean"]) if p["ci"] else 0 for p in shown],
                    "arrayminus": [(p["mean"] - p["ci"][0]) if p["ci"] else 0 for p in shown],
                },
            }
        )
    layout = _layout(
        "per-turn metrics (mean, 95% CI)",
        xaxis={"title": {"text": "turn"}, "dtick": 1},
        yaxis={"title": {"text": "score"}, "range": [0, 1.05]},
    )
    return {"data": data, "layout": layout}


def flow_figure(flow: dict[str, Any]) -> Any | None:
    """Question-type shares per turn, stacked."""
    per_turn = flow["per_turn"]
    if not per_turn:
        return None
    turns = list(per_turn)
    data = [
        {"type": "bar", "x": turns, "y": [per_turn[t]["shares"][qtype] for t in turns], "name": qtype}
        for qtype in flow["overall"]["counts"]
    ]
    layout = _layout(
        "question types per turn",
        barmode="stack",
        xaxis={"title": {"text": "turn"}},
        yaxis={"title": {"text": "share"}, "tickformat": ".0%"},
    )
    return {"data": data, "layout": layout}


def lengths_figure(lengths: dict[str, Any] | None) -> Any | None:
    """Conversations per number of turns, stacked by what stopped them (only the stops that occurred)."""
    if not lengths or not lengths["counts"]:
        return None
    turns = list(lengths["counts"])
    data = [
        {"type": "bar", "x": turns, "y": [by_turns.get(t, 0) for t in turns], "name": stop}
        for stop, by_turns in lengths["by_stop"].items()
        if lengths["stops"][stop]
    ]
    layout = _layout(
        "conversation length",
        barmode="stack",
        xaxis={"title": {"text": "turns"}, "type": "category"},
        yaxis={"title": {"text": "conversations"}},
    )
    return {"data": data, "layout": layout}


def rejections_figure(rejections: dict[str, Any]) -> Any | None:
    """Validator rejections as a category × turn heat map."""
    cells = rejections["cells"]
    if not cells:
        return None
    categories = list(rejections["by_category"])
    turns = sorted({c["turn"] for c in cells})
    z = [[0] * len(turns) for _ in categories]
    for c in cells:
        z[categories.index(c["category"])][turns.index(c["turn"])] += c["count"]
    heatmap = {
        "type": "heatmap",
        "z": z,
        "x": [str(t) for t in turns],
        "y": categories,
        "colorscale": REDS,
        "texttemplate": "%{z}",
    }
    layout = _layout("validator rejections by category and turn", xaxis={"title": {"text": "turn"}})
    return {"data": [heatmap], "layout": layout}


def figures(analysis: dict[str, Any]) -> dict[str, Any]:
    """{chart id: figure JSON} for the charts that have data."""
    made = {
        "curves": curves_figure(analysis["curves"]),
        "flow": flow_figure(analysis["flow"]),
        "lengths": lengths_figure(analysis.get("lengths")),
        "rejections": rejections_figure(analysis["rejections"]),
    }
    return {k: v for k, v in made.items() if v is not None}
