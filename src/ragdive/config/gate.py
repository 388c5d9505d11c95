"""Gate thresholds (`evaluation.gate:` in an experiment, `ragdive gate --min/--max` on the command line).

One rule is a sentence a reader can check by eye:

    ">= 0.9"                                   the metric's mean over the run
    ">= 0.8 per turn"                          every turn position's mean (turn 1, turn 2, ...)
    ">= 0.5 per conversation"                  every conversation's mean (one JUnit test case each)
    ">= 0.9 in at least 4 of 5 repeats"        the run mean, in at least 4 of 5 repeated runs

A metric takes one rule or a list of them. There is no default threshold: a gate that names nothing is a user
error, never a pass (a default of 0 passes anything).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

OPERATORS = (">=", "<=", ">", "<")
Level = Literal["overall", "turn", "conversation"]

_RULE = re.compile(
    r"^\s*(?P<op>>=|<=|>|<)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+))"
    r"(?:\s+per\s+(?P<level>turn|conversation))?"
    r"(?:\s+in\s+at\s+least\s+(?P<k>\d+)\s+of\s+(?P<n>\d+)\s+repeats?)?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GateRule:
    op: str
    threshold: float
    level: Level = "overall"
    at_least: tuple[int, int] | None = None
    """(k, n): the rule must hold in at least k of n repeated runs (each run's own value)."""

    def holds(self, value: float) -> bool:
        if self.op == ">=":
            return value >= self.threshold - 1e-12  # 0.9 must pass ">= 0.9" whatever floating point made of it
        if self.op == "<=":
            return value <= self.threshold + 1e-12
        if self.op == ">":
            return value > self.threshold
        return value < self.threshold

    @property
    def higher_is_better(self) -> bool:
        return self.op in (">=", ">")

    def __str__(self) -> str:
        text = f"{self.op} {self.threshold:g}"
        if self.level != "overall":
            text += f" per {self.level}"
        if self.at_least:
            text += f" in at least {self.at_least[0]} of {self.at_least[1]} repeats"
        return text


def parse_rule(text: str) -> GateRule:
    """A rule from its sentence; ValueError with the accepted forms when it is not one."""
    match = _RULE.match(str(text))
    if not match:
        raise ValueError(
            f"cannot read gate rule {text!r}: write it as '>= 0.9', '<= 0.2 per turn', "
            "'>= 0.5 per conversation' or '>= 0.9 in at least 4 of 5 repeats'"
        )
    at_least = None
    if match["k"] is not None:
        k, n = int(match["k"]), int(match["n"])
        if not 1 <= k <= n:
            raise ValueError(f"gate rule {text!r}: 'at least K of N' needs 1 <= K <= N")
        at_least = (k, n)
    level = (match["level"] or "overall").lower()
    return GateRule(match["op"], float(match["value"]), level, at_least)  # type: ignore[arg-type]


def parse_gate(spec: dict[str, str | list[str]]) -> dict[str, list[GateRule]]:
    """{metric: [rule, ...]} from the YAML/CLI form; ValueError naming the metric on a bad rule."""
    out: dict[str, list[GateRule]] = {}
    for metric, rules in spec.items():
        texts = [rules] if isinstance(rules, str | int | float) else list(rules)
        if not texts:
            raise ValueError(f"gate: {metric} has no rule")
        try:
            out[metric] = [parse_rule(str(t)) for t in texts]
        except ValueError as exc:
            raise ValueError(f"gate: {metric}: {exc}") from None
    return out


def bound_rules(minimums: list[str], maximums: list[str]) -> dict[str, list[GateRule]]:
    """``--min m=v`` / ``--max m=v`` as rules (`>= v`, `<= v`); the value may carry the rest of a rule sentence
    (``--min "correctness=0.8 per turn"``)."""
    out: dict[str, list[GateRule]] = {}
    for op, items in ((">=", minimums), ("<=", maximums)):
        for item in items:
            metric, sep, rest = item.partition("=")
            if not sep or not metric.strip() or not rest.strip():
                flag = "--min" if op == ">=" else "--max"
                raise ValueError(f"{flag} {item!r}: write METRIC=VALUE, e.g. {flag} correctness=0.8")
            out.setdefault(metric.strip(), []).append(parse_rule(f"{op} {rest.strip()}"))
    return out


def metric_drops(items: list[str]) -> dict[str, float]:
    """``--max-drop m=v``: the largest drop of m against the baseline that passes."""
    out: dict[str, float] = {}
    for item in items:
        metric, sep, value = item.partition("=")
        try:
            drop = float(value)
        except ValueError:
            drop = -1.0
        if not sep or not metric.strip() or drop < 0:
            raise ValueError(f"--max-drop {item!r}: write METRIC=DROP with DROP >= 0, e.g. --max-drop correctness=0.05")
        out[metric.strip()] = drop
    return out
