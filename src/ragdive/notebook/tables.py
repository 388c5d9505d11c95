"""One small table, as text (a repr) and as HTML (a notebook's display), so both always show the same cells."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any


def number(value: float | None, digits: int = 3) -> str:
    """A value, or an empty cell when there is none (never 0 standing in for unknown)."""
    return "" if value is None else f"{value:.{digits}f}"


def interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def html_table(header: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
