"""Metrics by name, from the one registry (registry.py). Single-turn metrics judge one turn; multi-turn metrics
judge a whole conversation."""

from __future__ import annotations

from .base import ConversationMetric, Outcome, TurnMetric, Unscorable
from .registry import (
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
    names = configured_metrics(names)
    registry = discover()
    turn = [registry[n].cls() for n in names if registry[n].kind == "turn"]
    conv = [registry[n].cls() for n in names if registry[n].kind == "conversation"]
    return turn, conv


__all__ = [
    "CONVERSATION_METRICS",
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
