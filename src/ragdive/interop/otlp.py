"""A run as OpenTelemetry traces over OTLP/HTTP (extra `otel`): `ragdive export --format otlp RUN`.

One trace per conversation, with the GenAI semantic conventions:

    conversation <id>            gen_ai.conversation.id, gen_ai.operation.name=invoke_agent, ragdive.persona, ...
      turn <n>                   the turn's question type, the target's latency
        user draft <k>           gen_ai.operation.name=chat, gen_ai.request.model (the user model), one per attempt
        validate <k>             the validator's verdict (deterministic checks or the validator model)
        target                   the system under test: the answer's length, contexts, latency, error
        evaluate <metric>        gen_ai.request.model (the judge); event gen_ai.evaluation.result
      evaluate <metric>          whole-conversation metrics, as above

Each score is a ``gen_ai.evaluation.result`` event (``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label`` when the metric gives one, ``gen_ai.evaluation.explanation``; an unscored item
has no value and ``error.type`` with its reason). Token usage per role is on the turn's spans
(``gen_ai.usage.input_tokens`` / ``output_tokens``) as the run recorded it, per turn and role.

A run keeps each conversation's start and end and each target call's latency, not the time of every model call:
the spans inside a conversation are laid out in order within its real start and end (``ragdive.timing =
reconstructed``); the target span's length is its measured latency. Trace ids derive from the run and conversation
ids, so exporting a run twice gives the same traces.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ..errors import ConfigError
from ..records import Conversation, Score, Turn

DEFAULT_ENDPOINT = "http://127.0.0.1:4318"


def _require_otel() -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise ConfigError("OTLP export needs OpenTelemetry: pip install 'ragdive[otel]'") from exc
    return OTLPSpanExporter


def traces_endpoint(endpoint: str | None) -> str:
    """The OTLP/HTTP traces URL: ``endpoint`` (a collector's base URL or its /v1/traces), else the standard
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT variables, else a local collector."""
    if not endpoint:
        direct = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        if direct:
            return direct
        endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINT
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def _id(*parts: str, bits: int) -> int:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[: bits // 8], "big") or 1


class _Ids:
    """The SDK's id generator with deterministic trace ids (run and conversation) and span ids (their path)."""

    def __init__(self) -> None:
        self.trace_id = 1
        self.span_key: list[str] = []
        self._count = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def is_trace_id_random(self) -> bool:
        return False  # derived from the run and conversation ids (W3C's "random" trace flag stays unset)

    def generate_span_id(self) -> int:
        self._count += 1
        return _id(str(self.trace_id), *self.span_key, str(self._count), bits=64)


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)


class _Clock:
    """Reconstructed times: steps without a measured duration share equally what the measured ones (the target's
    latency) leave of the parent's real span; a measured duration is kept as measured."""

    def __init__(self, start: int, end: int, unmeasured: int, measured: int = 0) -> None:
        self.now = start
        self.step = max(1, (end - start - measured) // max(1, unmeasured))

    def take(self, duration: int | None = None) -> tuple[int, int]:
        begin = self.now
        self.now = begin + (duration if duration is not None else self.step)
        return begin, self.now


def _latency_ns(turn: Turn) -> int:
    return 0 if turn.latency_s is None else int(turn.latency_s * 1e9)


def _usage_attributes(turn: Turn, role: str) -> dict[str, Any]:
    usage = turn.usage.get(role)
    if usage is None:
        return {}
    attributes: dict[str, Any] = {
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
    }
    if usage.cost_usd is not None:
        attributes["ragdive.cost_usd"] = usage.cost_usd
    return attributes


def _evaluation_event(score: Score) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": score.metric}
    if score.value is None:
        attributes["error.type"] = (score.unscored_reason or "unscored")[:200]
    else:
        attributes["gen_ai.evaluation.score.value"] = float(score.value)
        label = score.details.get("label") if isinstance(score.details, dict) else None
        if label:  # only a metric that gives one: a label made up from the value would say more than the judge did
            attributes["gen_ai.evaluation.score.label"] = str(label)
    if score.reason:
        attributes["gen_ai.evaluation.explanation"] = score.reason[:2000]
    return attributes


class _Checked:
    """The span exporter, counting spans it failed to send (the SDK only logs a failed export)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failed = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = self.inner.export(spans)
        if result != SpanExportResult.SUCCESS:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


class RunTracer:
    """Builds the spans of a run's conversations on an OpenTelemetry SDK tracer and sends them with OTLP/HTTP."""

    def __init__(self, run_id: str, models: dict[str, str], *, endpoint: str | None = None, exporter: Any = None):
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from .._version import __version__

        self.endpoint = traces_endpoint(endpoint)
        # the timeout: OTEL_EXPORTER_OTLP_TIMEOUT (seconds; the SDK default, 10 s, otherwise)
        self.sent = _Checked(exporter or _require_otel()(endpoint=self.endpoint))
        self.ids = _Ids()
        self.provider = TracerProvider(
            resource=Resource.create({"service.name": "ragdive", "service.version": __version__}),
            id_generator=self.ids,  # type: ignore[arg-type]
        )
        self.provider.add_span_processor(BatchSpanProcessor(self.sent))  # type: ignore[arg-type]
        self.tracer = self.provider.get_tracer("ragdive", __version__)
        self.run_id = run_id
        self.models = models
        self.parents: dict[tuple[str, int | None], Any] = {}  # (conversation, turn or None): its span's context

    def conversation(self, conversation: Conversation, scores: Sequence[Score] = ()) -> None:
        """One trace: the conversation, its turns and what happened in each, and the scores given to them."""
        from opentelemetry import trace

        self.ids.trace_id = _id(self.run_id, conversation.id, bits=128)
        self.ids.span_key = [conversation.id]
        by_turn: dict[int | None, list[Score]] = defaultdict(list)
        for score in scores:
            by_turn[score.turn_index].append(score)
        start, end = _ns(conversation.started), _ns(conversation.finished)
        measured = sum(_latency_ns(t) for t in conversation.turns)
        extra = 1 if by_turn.get(None) else 0
        clock = _Clock(start, end, max(1, len(conversation.turns) + extra), measured)
        root = self.tracer.start_span(
            f"conversation {conversation.id}",
            start_time=start,
            attributes={
                "gen_ai.conversation.id": conversation.id,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "ragdive simulated user",
                "ragdive.run_id": self.run_id,
                "ragdive.persona": conversation.persona,
                "ragdive.document_ids": list(conversation.document_ids),
                "ragdive.status": conversation.status,
                "ragdive.turns": len(conversation.turns),
                "ragdive.timing": "reconstructed",
            },
        )
        self.parents[(conversation.id, None)] = root.get_span_context()
        if conversation.status == "error":
            root.set_status(trace.Status(trace.StatusCode.ERROR, conversation.error or "error"))
        context = trace.set_span_in_context(root)
        for turn in conversation.turns:
            begin, finish = clock.take(clock.step + _latency_ns(turn))
            self._turn(conversation, turn, by_turn.get(turn.index, []), context, begin, finish)
        for score in by_turn.get(None, []):
            begin, finish = clock.take()
            self._judge(score, context, begin, finish)
        root.end(end_time=max(end, clock.now))

    def _turn(self, conversation: Conversation, turn: Turn, scores: list[Score], parent: Any, begin: int, end: int):
        from opentelemetry import trace

        span = self.tracer.start_span(
            f"turn {turn.index + 1}",
            context=parent,
            start_time=begin,
            attributes={
                "gen_ai.conversation.id": conversation.id,
                "ragdive.turn": turn.index + 1,
                "ragdive.question_type": str(turn.question_type),
                "ragdive.unanswerable": turn.unanswerable,
                "ragdive.attempts": len(turn.attempts),
                "ragdive.validator_overruled": turn.validator_overruled,
            },
        )
        self.parents[(conversation.id, turn.index)] = span.get_span_context()
        inner = trace.set_span_in_context(span)
        latency = None if turn.latency_s is None else _latency_ns(turn)
        steps = 2 * len(turn.attempts) + len(scores) + (1 if latency is None else 0)
        clock = _Clock(begin, end, steps, latency or 0)
        for k, attempt in enumerate(turn.attempts, start=1):
            a, b = clock.take()
            self._span(
                f"user draft {k}",
                inner,
                a,
                b,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": self.models.get("user", "unknown"),
                    "ragdive.role": "user",
                    "ragdive.question_type": str(attempt.draft.question_type),
                    **(_usage_attributes(turn, "user") if k == 1 else {}),
                },
            )
            a, b = clock.take()
            checked_by = attempt.verdict.checked_by
            model = {"gen_ai.request.model": self.models.get("validator", "unknown")} if checked_by == "llm" else {}
            self._span(
                f"validate {k}",
                inner,
                a,
                b,
                {
                    "gen_ai.operation.name": "chat" if checked_by == "llm" else "deterministic_checks",
                    "ragdive.role": "validator",
                    "ragdive.checked_by": checked_by,
                    "ragdive.valid": attempt.verdict.valid,
                    "ragdive.failed_checks": [str(c) for c in attempt.verdict.failed_checks],
                    **model,
                    **(_usage_attributes(turn, "validator") if k == 1 else {}),
                },
            )
        a, b = clock.take(latency)
        target = self._span(
            "target",
            inner,
            a,
            b,
            {
                "ragdive.role": "target",
                "ragdive.contexts": len(turn.contexts),
                "ragdive.answer_chars": len(turn.answer or ""),
                **({"ragdive.latency_s": turn.latency_s} if turn.latency_s is not None else {}),
                **_usage_attributes(turn, "target"),
            },
            end_now=False,
        )
        if turn.error:
            target.set_status(trace.Status(trace.StatusCode.ERROR, turn.error[:500]))
            target.set_attribute("error.type", turn.error.split(":")[0][:100])
        target.end(end_time=b)
        for score in scores:
            a, b = clock.take()
            self._judge(score, inner, a, b)
        span.end(end_time=max(end, clock.now))

    def score(self, score: Score) -> None:
        """Live (`run --otel`): a score given after its conversation's trace was sent, as the same ``evaluate``
        span under its turn (or conversation) span, at the time it arrives. A conversation finished in an earlier
        session of a resumed run has no span here: its score is the root of a span in the conversation's trace."""
        import time

        from opentelemetry import trace

        self.ids.trace_id = _id(self.run_id, score.conversation_id, bits=128)
        self.ids.span_key = [score.conversation_id, score.metric, str(score.turn_index)]
        known = self.parents.get((score.conversation_id, score.turn_index))
        parent = trace.set_span_in_context(trace.NonRecordingSpan(known)) if known is not None else None
        now = time.time_ns()
        self._judge(score, parent, now, now)

    def _judge(self, score: Score, parent: Any, begin: int, end: int) -> None:
        span = self._span(
            f"evaluate {score.metric}",
            parent,
            begin,
            end,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": score.judge_model or self.models.get("judge", "unknown"),
                "ragdive.role": "judge",
                "gen_ai.evaluation.name": score.metric,
            },
            end_now=False,
        )
        span.add_event("gen_ai.evaluation.result", attributes=_evaluation_event(score), timestamp=end)
        span.end(end_time=end)

    def _span(self, name: str, parent: Any, begin: int, end: int, attributes: dict[str, Any], *, end_now=True) -> Any:
        span = self.tracer.start_span(name, context=parent, start_time=begin, attributes=attributes)
        if end_now:
            span.end(end_time=end)
        return span

    def close(self) -> None:
        """Send what is buffered and stop; a collector that did not take the spans is a ConfigError naming it."""
        flushed = self.provider.force_flush(timeout_millis=60_000)
        self.provider.shutdown()
        if not flushed or self.sent.failed:
            raise ConfigError(
                f"the OTLP collector at {self.endpoint} did not take {self.sent.failed or 'all'} of the spans "
                "(is it running? --endpoint or OTEL_EXPORTER_OTLP_ENDPOINT names it)"
            )


def export_traces(
    run_id: str,
    models: dict[str, str],
    conversations: Iterable[Conversation],
    scores: Iterable[Score],
    *,
    endpoint: str | None = None,
    exporter: Any = None,
) -> int:
    """Send every conversation's trace; returns the number of traces."""
    by_conversation: dict[str, list[Score]] = defaultdict(list)
    for score in scores:
        by_conversation[score.conversation_id].append(score)
    tracer = RunTracer(run_id, models, endpoint=endpoint, exporter=exporter)
    count = 0
    try:
        for conversation in conversations:
            tracer.conversation(conversation, by_conversation.get(conversation.id, []))
            count += 1
    finally:
        tracer.close()
    return count
