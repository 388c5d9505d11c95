"""Front-door re-exports for the commands that are not runs: checking a config (`ragdive config check`), serving
the reference RAG (`ragdive serve-rag`), and which metrics improve downwards (`ragdive compare`)."""

from __future__ import annotations

from typing import Any

from ..config import ExperimentConfig
from ..pipeline import serve
from ..pipeline.preflight import ProbeResult, offline_check, probe
from ..pipeline.serve import MAX_BODY_BYTES
from .configs import with_roles
from .results import lower_is_better

__all__ = ["MAX_BODY_BYTES", "ProbeResult", "build_app", "lower_is_better", "offline_check", "probe"]


def build_app(
    config: ExperimentConfig,
    model: str | None = None,
    *,
    token: str | None = None,
    client_session_ids: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> tuple[Any, Any]:
    """The reference RAG of ``config`` as an ASGI app and the RAG itself (`ragdive serve-rag`); ``model``
    (provider/model) is its generator in place of the config's."""
    return serve.build_app(
        with_roles(config, f"target={model}" if model else ()),
        token=token,
        client_session_ids=client_session_ids,
        max_body_bytes=max_body_bytes,
    )
