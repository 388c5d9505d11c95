"""Evaluation stage: the judge, per-turn and per-conversation metrics, the evaluator, statistics, static mode."""

from .arrivals import AnsweredTurn, Arrivals
from .evaluator import EvaluationResult, Evaluator
from .judge import Judge, render_prompt
from .metrics import (
    CONVERSATION_METRICS,
    LOWER_IS_BETTER,
    TURN_METRICS,
    ConversationMetric,
    TurnMetric,
    resolve_metrics,
)

__all__ = [
    "AnsweredTurn",
    "Arrivals",
    "CONVERSATION_METRICS",
    "LOWER_IS_BETTER",
    "TURN_METRICS",
    "ConversationMetric",
    "EvaluationResult",
    "Evaluator",
    "Judge",
    "TurnMetric",
    "render_prompt",
    "resolve_metrics",
]
