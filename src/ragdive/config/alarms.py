"""Validity alarms: thresholds past which a run's numbers would mislead a reader (see analysis/alarms.py)."""

from __future__ import annotations

from pydantic import Field

from ._base import Section


class AlarmsConfig(Section):
    """When to raise a validity alarm. Each threshold is a share in [0, 1]; an alarm fires when the run's share
    is above it; null turns that alarm off. ``--strict`` makes any alarm a non-zero exit."""

    overruled_share: float | None = Field(default=0.10, ge=0, le=1)
    """Turns accepted only because the validator's attempts ran out (``validator_overruled``): such turns were
    never validated, so a run full of them measures the target on questions nobody checked."""
    judge_failure_share: float | None = Field(default=0.05, ge=0, le=1)
    """Score items the judge failed on (call failed or answered in the wrong shape): the means rest on the rest."""
    error_share: float | None = Field(default=0.0, ge=0, le=1)
    """Conversations that ended in ``error``: their turns are missing from every mean."""
    no_context_share: float | None = Field(default=0.10, ge=0, le=1)
    """Answered turns whose target reported no retrieved contexts: context metrics cannot score them."""
    seed_reuse_share: float | None = Field(default=0.25, ge=0, le=1)
    """Conversations whose seed documents another conversation of the run also used (a corpus smaller than the
    plan): they are not independent samples, and intervals computed as if they were are too narrow."""
    empty_metrics: bool = True
    """A metric with items but not one scored (every item unscored): its mean is missing, not 0."""
