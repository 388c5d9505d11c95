from __future__ import annotations

from ._base import Section


class ObservabilityConfig(Section):
    """Where a run is sent live, as it goes (the export after the fact is `ragdive export`)."""

    otlp_endpoint: str | None = None
    """An OpenTelemetry collector's OTLP/HTTP URL (its base or its /v1/traces; extra `otel`): each conversation's
    trace is sent when the conversation is written, each score's span when it is given. `run --otel URL` sets it
    for one run. null: nothing sent."""
