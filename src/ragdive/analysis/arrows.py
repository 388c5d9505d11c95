"""When a change earns an arrow. The default is the paper's Table 5 rule, an absolute change of 0.05 of the mean
(analysis/compare.py's ``arrow_for``); ``relative:5%`` marks a change of 5 % of the baseline value instead."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError
from .compare import ARROW_THRESHOLD

_RULE = re.compile(r"^(absolute|relative):([0-9]*\.?[0-9]+)(%?)$")
TOLERANCE = 1e-9
"""0.97 -> 0.92 is a change of 0.05 to a reader, 0.0499999... to floating point (as in compare.arrow_for)."""


@dataclass(frozen=True)
class ArrowRule:
    kind: Literal["absolute", "relative"] = "absolute"
    threshold: float = ARROW_THRESHOLD
    """Absolute: in metric units; relative: a fraction of the baseline value (0.05 = 5 %)."""

    @classmethod
    def parse(cls, text: str) -> ArrowRule:
        """``absolute:0.05``, ``relative:5%`` or ``relative:0.05``."""
        match = _RULE.match(text.strip())
        if not match:
            raise ConfigError(f"--arrow {text!r}: expected absolute:0.05 or relative:5%")
        kind, number, percent = match.groups()
        threshold = float(number) / (100 if percent else 1)
        if kind == "absolute" and percent:
            raise ConfigError(f"--arrow {text!r}: an absolute threshold is in metric units, not a percentage")
        if threshold <= 0:
            raise ConfigError(f"--arrow {text!r}: the threshold must be above 0")
        return cls(kind, threshold)  # type: ignore[arg-type]

    def __str__(self) -> str:
        if self.kind == "relative":
            return f"relative:{self.threshold * 100:g}%"
        return f"absolute:{self.threshold:g}"

    def arrow(self, base: float | None, value: float | None) -> str:
        """↑ or ↓ when ``value`` moved from ``base`` by at least the threshold, else ""."""
        if base is None or value is None:
            return ""
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
