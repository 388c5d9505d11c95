"""Whole-conversation metrics."""

from .attribution import LostInformation
from .context_retention import ContextRetention
from .forgetfulness import Forgetfulness

__all__ = ["ContextRetention", "Forgetfulness", "LostInformation"]
