"""Typed records that flow between stages and into the run directory."""

from .annotation import CRITERIA, Annotation, Criterion, criteria, item_id
from .conversation import (
    SIMULATED_TYPES,
    Attempt,
    Citation,
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
from .manifest import SCHEMA_VERSION, ModelLimit, ModelSpend, Provenance, RunManifest, RunProcess, SourceFile, Totals
from .scoring import Score

__all__ = [
    "SCHEMA_VERSION",
    "CRITERIA",
    "Annotation",
    "SIMULATED_TYPES",
    "Attempt",
    "Citation",
    "Context",
    "Criterion",
    "Conversation",
    "Document",
    "FailedCheck",
    "ModelLimit",
    "ModelSpend",
    "Persona",
    "Provenance",
    "QuestionType",
    "Rejection",
    "RunManifest",
    "RunProcess",
    "Score",
    "SourceFile",
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
