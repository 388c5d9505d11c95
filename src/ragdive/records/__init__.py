"""Typed records that flow between stages and into the run directory."""

from .annotation import CRITERIA, Annotation, Criterion, criteria, item_id
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
from .manifest import SCHEMA_VERSION, ModelSpend, RunManifest, RunProcess, Totals
from .scoring import Score

__all__ = [
    "SCHEMA_VERSION",
    "CRITERIA",
    "Annotation",
    "Attempt",
    "Context",
    "Criterion",
    "Conversation",
    "Document",
    "FailedCheck",
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
    "criteria",
    "item_id",
    "rejection_id",
]
