"""Typed records that flow between stages and into the run directory."""

from .conversation import (
    Attempt,
    Context,
    Conversation,
    FailedCheck,
    QuestionType,
    Rejection,
    TargetReply,
    Turn,
    TurnDraft,
    Usage,
    Verdict,
    rejection_id,
)
from .corpus import Document, Persona
from .manifest import SCHEMA_VERSION, ModelLimit, ModelSpend, RunManifest, RunProcess, Totals
from .scoring import Score

__all__ = [
    "SCHEMA_VERSION",
    "Attempt",
    "Context",
    "Conversation",
    "Document",
    "FailedCheck",
    "ModelLimit",
    "ModelSpend",
    "Persona",
    "QuestionType",
    "Rejection",
    "RunManifest",
    "RunProcess",
    "Score",
    "TargetReply",
    "Totals",
    "Turn",
    "TurnDraft",
    "Usage",
    "Verdict",
    "rejection_id",
]
