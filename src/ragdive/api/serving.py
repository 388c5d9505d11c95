"""Front-door re-exports for the commands that are not runs: checking a config (`ragdive config check`), serving
the reference RAG (`ragdive serve-rag`), and which metrics improve downwards (`ragdive compare`)."""

from __future__ import annotations

from ..pipeline.preflight import ProbeResult, offline_check, probe
from ..pipeline.serve import MAX_BODY_BYTES, build_app

__all__ = ["MAX_BODY_BYTES", "ProbeResult", "build_app", "lower_is_better", "offline_check", "probe"]


def lower_is_better() -> frozenset[str]:
    """The metrics whose lower values are better (forgetfulness...), from the metric registry."""
    from ..evaluation.metrics import LOWER_IS_BETTER

    return frozenset(LOWER_IS_BETTER)
