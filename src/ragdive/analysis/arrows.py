"""When a change earns an arrow. The default is the paper's Table 5 rule, an absolute change of 0.05 of the mean
(analysis/compare.py's ``arrow_for``); ``relative:5%`` marks a change of 5 % of the baseline value instead."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError
from .compare import ARROW_THRESHOLD, TOLERANCE

_RULE = re.compile(r"^(absolute|relative):([0-9]*\.?[0-9]+)(%?)$")


PAPER_DECIMALS = 2
"""The paper's tables print 2 decimals and mark their `*` and arrows from those printed values: its Table 4 leaves
3 contexts / context precision (.7847) unstarred against a baseline max of .7837, which only the rounded rule
does (0.78 <= 0.78)."""


@dataclass(frozen=True)
class ArrowRule:
    """When a table marks a cell: an arrow (a change against the baseline row) and a `*` (a mean outside the
    baseline's min–max band). Both compare with a stated tolerance, so equal values never differ by a last bit;
    ``rounded`` compares the values rounded to 2 decimals first, as the paper's printed tables did."""

    kind: Literal["absolute", "relative"] = "absolute"
    threshold: float = ARROW_THRESHOLD
    """Absolute: in metric units; relative: a fraction of the baseline value (0.05 = 5 %)."""
    rounded: bool = False
    """Round to 2 decimals before comparing (reproduces the paper's tables); the default compares unrounded."""

    @classmethod
    def parse(cls, text: str) -> ArrowRule:
        """``absolute:0.05``, ``relative:5%`` or ``relative:0.05``; `` rounded`` after it compares values rounded to
        2 decimals, as the paper's tables did (how ``str`` spells such a rule)."""
        body = text.strip()
        rounded = body.endswith(" rounded")
        if rounded:
            body = body.removesuffix(" rounded").strip()
        match = _RULE.match(body)
        if not match:
            raise ConfigError(f"--arrow {text!r}: expected absolute:0.05 or relative:5%")
        kind, number, percent = match.groups()
        threshold = float(number) / (100 if percent else 1)
        if kind == "absolute" and percent:
            raise ConfigError(f"--arrow {text!r}: an absolute threshold is in metric units, not a percentage")
        if threshold <= 0:
            raise ConfigError(f"--arrow {text!r}: the threshold must be above 0")
        return cls(kind, threshold, rounded)  # type: ignore[arg-type]

    def __str__(self) -> str:
        text = f"relative:{self.threshold * 100:g}%" if self.kind == "relative" else f"absolute:{self.threshold:g}"
        return f"{text} rounded" if self.rounded else text

    def comparison(self) -> str:
        """How values are compared, as a table's footnote states it (the `*` and the arrows alike)."""
        how = f"rounded to {PAPER_DECIMALS} decimals first, as the paper did" if self.rounded else "unrounded"
        return f"{how}, tolerance {TOLERANCE:g}"

    def describe(self) -> str:
        """The arrow rule with its comparison."""
        return f"{self}; {self.comparison()}"

    def _shown(self, value: float) -> float:
        return round(value, PAPER_DECIMALS) if self.rounded else value

    def outside(self, value: float | None, low: float | None, high: float | None) -> bool:
        """Whether ``value`` lies outside [low, high] by more than the tolerance (the paper's `*`)."""
        if value is None or low is None or high is None:
            return False
        value, low, high = self._shown(value), self._shown(low), self._shown(high)
        return value < low - TOLERANCE or value > high + TOLERANCE

    def arrow(self, base: float | None, value: float | None) -> str:
        """↑ or ↓ when ``value`` moved from ``base`` by at least the threshold, else ""."""
        if base is None or value is None:
            return ""
        base, value = self._shown(base), self._shown(value)
        change = value - base
        if self.kind == "relative":
            if base == 0:
                return "" if change == 0 else ("↑" if change > 0 else "↓")
            change /= abs(base)
        if change >= self.threshold - TOLERANCE:
            return "↑"
        if change <= -self.threshold + TOLERANCE:
            return "↓"
        return ""


def better(arrow: str, direction: str) -> bool | None:
    """Whether the arrow's move is an improvement for a metric of this direction (``higher`` or ``lower`` is
    better); None without an arrow. ↑ on forgetfulness is a regression."""
    if not arrow:
        return None
    return (arrow == "↓") == (direction == "lower")
