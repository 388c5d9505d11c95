"""Metrics by name. Single-turn metrics judge one turn; multi-turn metrics judge a whole conversation."""

from __future__ import annotations

from ...errors import ConfigError
from .base import ConversationMetric, Outcome, TurnMetric, Unscorable
from .multi_turn import ContextRetention, Forgetfulness
from .single_turn import ContextPrecision, ContextRecall, Correctness, Faithfulness

TURN_METRICS: dict[str, type[TurnMetric]] = {
    m.name: m for m in (Faithfulness, ContextPrecision, ContextRecall, Correctness)
}
CONVERSATION_METRICS: dict[str, type[ConversationMetric]] = {m.name: m for m in (Forgetfulness, ContextRetention)}
LOWER_IS_BETTER = frozenset({"forgetfulness"})


def resolve_metrics(names: list[str]) -> tuple[list[TurnMetric], list[ConversationMetric]]:
    unknown = [n for n in names if n not in TURN_METRICS and n not in CONVERSATION_METRICS]
    if unknown:
        known = ", ".join([*TURN_METRICS, *CONVERSATION_METRICS])
        raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; known: {known}")
    turn = [TURN_METRICS[n]() for n in names if n in TURN_METRICS]
    conv = [CONVERSATION_METRICS[n]() for n in names if n in CONVERSATION_METRICS]
    return turn, conv


__all__ = [
    "CONVERSATION_METRICS",
    "LOWER_IS_BETTER",
    "TURN_METRICS",
    "ConversationMetric",
    "Outcome",
    "TurnMetric",
    "Unscorable",
    "resolve_metrics",
]
