"""Adapters for the RAG system under test, and the reference RAG system."""

from .base import DialogueState, Target

__all__ = ["DialogueState", "Target"]
