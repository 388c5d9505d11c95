"""`ragdive analyze RUN... --themes`: the failure themes of analysis/themes.py, in the terminal or as JSON."""

from __future__ import annotations

from rich import box
from rich.table import Table

from ..analysis.themes import Theme
from ..errors import ConfigError
from .display import out


def parse_below(items: list[str]) -> dict[str, float]:
    """``--below metric=value`` (repeatable)."""
    out_: dict[str, float] = {}
    for item in items:
        metric, sep, value = item.partition("=")
        try:
            out_[metric.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not metric.strip():
            raise ConfigError(f"--below {item!r}: write METRIC=VALUE, e.g. --below correctness=0.5")
    return out_


def print_themes(themes: list[Theme]) -> None:
    if not themes:
        out.print("failure themes: no scored item is below its threshold", markup=False)
        return
    table = Table(title="failure themes (by share of the loss)", box=box.SIMPLE, pad_edge=False, title_justify="left")
    for col in ("theme", "items", "loss", "metrics", "turns", "personas"):
        table.add_column(col, justify="right" if col in ("items", "loss") else "left")

    def top(counts: dict[str, int]) -> str:
        return ", ".join(f"{k} ({v})" for k, v in list(counts.items())[:3])

    for t in themes:
        table.add_row(t.label, str(t.size), f"{t.loss_share:.0%}", top(t.metrics), top(t.turns), top(t.personas))
    out.print(table)
    for n, t in enumerate(themes, 1):
        for e in t.examples:
            where = f"turn {e['turn']}" if e["turn"] else "conversation"
            first = e["text"].replace("\n", " | ")[:200]
            out.print(
                f"  {n}. {t.label}: {e['conversation_id']} {where}, {e['metric']} {e['value']:.2f}: {first}",
                markup=False,
            )
