"""The report's charts as plotly figure JSON (data + layout), drawn in the page by the one inlined plotly.js.

Figures travel as JSON in `<script type="application/json">` blocks rather than as plotly's own `to_html`
snippets, which write the figure into JavaScript code: here no data is ever part of a script.
"""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

_LAYOUT: dict[str, Any] = {
    "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
    "height": 320,
    "template": "plotly_white",
}


def _json(fig: go.Figure) -> Any:
    return json.loads(fig.to_json())


def curves_figure(curves: dict[str, list[dict[str, Any]]]) -> Any | None:
    """Mean of each per-turn metric by turn, with its 95 % CI as error bars."""
    if not curves:
        return None
    fig = go.Figure()
    for metric, points in curves.items():
        shown = [p for p in points if p["mean"] is not None]
        fig.add_trace(
            go.Scatter(
                x=[p["turn"] for p in shown],
                y=[p["mean"] for p in shown],
                name=metric,
                mode="lines+markers",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [(p["ci"][1] - p["mean"]) if p["ci"] else 0 for p in shown],
                    "arrayminus": [(p["mean"] - p["ci"][0]) if p["ci"] else 0 for p in shown],
                },
            )
        )
    fig.update_layout(title="per-turn metrics (mean, 95% CI)", xaxis={"title": "turn", "dtick": 1}, **_LAYOUT)
    fig.update_yaxes(title="score", range=[0, 1.05])
    return _json(fig)


def flow_figure(flow: dict[str, Any]) -> Any | None:
    """Question-type shares per turn, stacked."""
    per_turn = flow["per_turn"]
    if not per_turn:
        return None
    turns = list(per_turn)
    fig = go.Figure()
    for qtype in flow["overall"]["counts"]:
        fig.add_trace(go.Bar(x=turns, y=[per_turn[t]["shares"][qtype] for t in turns], name=qtype))
    fig.update_layout(title="question types per turn", barmode="stack", xaxis={"title": "turn"}, **_LAYOUT)
    fig.update_yaxes(title="share", tickformat=".0%")
    return _json(fig)


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
    fig = go.Figure(go.Heatmap(z=z, x=[str(t) for t in turns], y=categories, colorscale="Reds", texttemplate="%{z}"))
    fig.update_layout(title="validator rejections by category and turn", xaxis={"title": "turn"}, **_LAYOUT)
    return _json(fig)


def figures(analysis: dict[str, Any]) -> dict[str, Any]:
    """{chart id: figure JSON} for the charts that have data."""
    made = {
        "curves": curves_figure(analysis["curves"]),
        "flow": flow_figure(analysis["flow"]),
        "rejections": rejections_figure(analysis["rejections"]),
    }
    return {k: v for k, v in made.items() if v is not None}
