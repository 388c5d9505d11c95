"""Per-turn metrics: one judged turn each."""

from .context_precision import ContextPrecision, average_precision
from .context_recall import ContextRecall
from .correctness import Correctness
from .faithfulness import Faithfulness

__all__ = ["ContextPrecision", "ContextRecall", "Correctness", "Faithfulness", "average_precision"]
