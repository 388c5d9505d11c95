"""The sweep report's pass^k curve: one line per cell over k = 1..K, drawn as inline SVG (the sweep page carries no
script, and its Content-Security-Policy allows none). Unknown points (no document with k determined repeats) are
gaps, never 0."""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
WIDTH, HEIGHT, LEFT, BOTTOM, TOP, RIGHT = 560, 260, 44, 30, 12, 12


def pass_k_view(rows: list[Any], cells: list[str]) -> dict[str, Any]:
    """{"ks": [1..K], "cells": [{"cell", "values": {k: value}, "n": {k: n_documents}}]} in the cells' order."""
    ks = sorted({r.k for r in rows})
    ordered = [c for c in cells if any(r.cell == c for r in rows)]
    return {
        "ks": ks,
        "cells": [
            {
                "cell": c,
                "values": {r.k: r.value for r in rows if r.cell == c},
                "n": {r.k: r.n_documents for r in rows if r.cell == c},
            }
            for c in ordered
        ],
    }


def pass_k_svg(view: dict[str, Any]) -> Markup:
    ks: list[int] = view["ks"]
    if not ks:
        return Markup("")
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(k: int) -> float:
        return LEFT + (plot_w * (k - ks[0]) / (ks[-1] - ks[0]) if len(ks) > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - v)

    parts = [f'<svg class="pass-k" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">']
    parts.append("<title>pass^k by cell: share of seed documents passing in all k repeats</title>")
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>'
            f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" font-size="11" text-anchor="end">{tick:g}</text>'
        )
    for k in ks:
        parts.append(f'<text x="{x(k):.1f}" y="{HEIGHT - 10}" font-size="11" text-anchor="middle">k={k}</text>')
    for i, cell in enumerate(view["cells"]):
        colour = PALETTE[i % len(PALETTE)]
        segment: list[str] = []
        segments = [segment]
        for k in ks:
            value = cell["values"].get(k)
            if value is None:
                segment = []
                segments.append(segment)
                continue
            segment.append(f"{x(k):.1f},{y(value):.1f}")
            label = escape(f"{cell['cell']}: pass^{k} = {value:.3f} ({cell['n'].get(k)} documents)")
            parts.append(
                f'<circle cx="{x(k):.1f}" cy="{y(value):.1f}" r="3" fill="{colour}"><title>{label}</title></circle>'
            )
        for points in segments:
            if len(points) > 1:
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/>')
    parts.append("</svg>")
    legend = "".join(
        f'<li><span style="color:{PALETTE[i % len(PALETTE)]}">&#9632;</span> {escape(c["cell"])}</li>'
        for i, c in enumerate(view["cells"])
    )
    return Markup("".join(parts) + f'<ul class="legend">{legend}</ul>')  # noqa: S704 - built from escaped text
