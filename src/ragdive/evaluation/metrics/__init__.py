"""Metrics by name, from the one registry (registry.py). Single-turn metrics judge one turn; multi-turn metrics
judge a whole conversation."""

from __future__ import annotations

from .base import ConversationMetric, Outcome, TurnMetric, Unscorable
from .registry import (
    METRICS,
    MetricInfo,
    all_metrics,
    check_metric_names,
    configured_metrics,
    discover,
    metric,
    metric_info,
)

discover()
TURN_METRICS: dict[str, type[TurnMetric]] = {m.name: m.cls for m in all_metrics("turn")}
CONVERSATION_METRICS: dict[str, type[ConversationMetric]] = {m.name: m.cls for m in all_metrics("conversation")}
LOWER_IS_BETTER = frozenset(m.name for m in all_metrics() if m.lower_is_better)


def resolve_metrics(names: list[str] | None) -> tuple[list[TurnMetric], list[ConversationMetric]]:
    """Instances of the named metrics (None: every registered one); unknown names are one ConfigError."""
    infos = [metric_info(n) for n in configured_metrics(names)]
    turn = [m.cls() for m in infos if m.kind == "turn"]
    conv = [m.cls() for m in infos if m.kind == "conversation"]
    return turn, conv


__all__ = [
    "CONVERSATION_METRICS",
    "METRICS",
    "LOWER_IS_BETTER",
    "TURN_METRICS",
    "ConversationMetric",
    "MetricInfo",
    "Outcome",
    "TurnMetric",
    "Unscorable",
    "all_metrics",
    "check_metric_names",
    "configured_metrics",
    "metric",
    "metric_info",
    "resolve_metrics",
]
