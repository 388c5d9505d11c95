"""Adapters for the RAG system under test, and the reference RAG system (`ragdive.targets.reference`)."""

from .base import DialogueState, Target
from .factory import build_experiment_target, build_target
from .python_callable import PythonTarget, coerce_reply

__all__ = ["DialogueState", "PythonTarget", "Target", "build_experiment_target", "build_target", "coerce_reply"]
