"""A run sent live to an OpenTelemetry collector (`run --otel URL`, `observability.otlp_endpoint`): an Observer that
passes everything on to the caller's observer and, as the run goes, sends each written conversation's trace and
each score's span, the span tree `ragdive export --format otlp` sends after the fact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import Conversation, Score, Totals
from ..store import RunStore
from .observer import Observer, Relay


class LiveTraces(Relay):
    def __init__(self, inner: Observer, endpoint: str) -> None:
        from ..interop.otlp import _require_otel

        _require_otel()  # a missing extra is a ConfigError before anything runs
        super().__init__(inner)
        self.endpoint = endpoint
        self.tracer: Any = None

    def run_created(self, run_dir: Path, to_do: int | None = None) -> None:
        from ..interop.otlp import RunTracer

        manifest = RunStore.open(run_dir).read_manifest()
        self.tracer = RunTracer(manifest.run_id, manifest.models, endpoint=self.endpoint)
        super().run_created(run_dir, to_do)

    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        if self.tracer is not None:
            self.tracer.conversation(conversation)
        super().conversation(conversation, totals)

    def scored(self, score: Score) -> None:
        if self.tracer is not None:
            self.tracer.score(score)
        super().scored(score)

    def close(self) -> None:
        """Send what is buffered; a collector that did not take the spans is a ConfigError naming it."""
        if self.tracer is not None:
            self.tracer.close()
