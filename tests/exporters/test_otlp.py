"""`ragdive export --format otlp`: a scored run sent to a real OTLP/HTTP receiver on loopback, decoded from
protobuf; the span tree, the GenAI attributes and the evaluation events are checked."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
pytest.importorskip("opentelemetry.proto", reason="the otel extra (opentelemetry-proto) is not installed")

from ragdive.cli.main import main  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.pipeline.helpers import write_experiment  # noqa: E402

from .otlp_receiver import Receiver, attributes  # noqa: E402


def scored_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> RunStore:
    config = write_experiment(tmp_path, extra="")
    assert main(["run", str(config)]) == 0
    return RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))


def test_export_sends_one_trace_per_conversation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scored_run(tmp_path, capsys)
    conversations = store.current_conversations()
    scores = store.current_scores()
    with Receiver() as receiver:
        assert main(["export", str(store.path), "--format", "otlp", "--endpoint", receiver.url]) == 0
    assert "otlp: sent" in capsys.readouterr().out
    assert receiver.requests >= 1 and receiver.resources[0]["service.name"] == "ragdive"
    spans = receiver.spans
    by_id = {s.span_id: s for s in spans}
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == len(conversations) == len({s.trace_id for s in spans})
    for root in roots:
        attrs = attributes(root.attributes)
        assert attrs["gen_ai.operation.name"] == "invoke_agent"
        conversation = next(c for c in conversations if c.id == attrs["gen_ai.conversation.id"])
        assert root.name == f"conversation {conversation.id}" and attrs["ragdive.persona"] == conversation.persona
        children: dict[bytes, list] = defaultdict(list)
        for s in spans:
            if s.trace_id == root.trace_id and s.parent_span_id:
                children[s.parent_span_id].append(s)
                assert s.start_time_unix_nano <= s.end_time_unix_nano
                parent = by_id[s.parent_span_id]
                assert parent.start_time_unix_nano <= s.start_time_unix_nano <= parent.end_time_unix_nano
        turns = [s for s in children[root.span_id] if s.name.startswith("turn ")]
        assert [t.name for t in turns] == [f"turn {t.index + 1}" for t in conversation.turns]
        for turn_span, turn in zip(turns, conversation.turns, strict=True):
            names = [s.name for s in children[turn_span.span_id]]
            assert names[:2] == ["user draft 1", "validate 1"] and "target" in names
            user = next(s for s in children[turn_span.span_id] if s.name == "user draft 1")
            user_attrs = attributes(user.attributes)
            assert user_attrs["gen_ai.request.model"] == "scripted/user"
            assert user_attrs["gen_ai.operation.name"] == "chat"
            assert user_attrs["gen_ai.usage.input_tokens"] == turn.usage["user"].prompt_tokens
            target = next(s for s in children[turn_span.span_id] if s.name == "target")
            duration = (target.end_time_unix_nano - target.start_time_unix_nano) / 1e9
            assert duration == pytest.approx(turn.latency_s, abs=1e-3)  # measured, not reconstructed
            judged = [s for s in children[turn_span.span_id] if s.name.startswith("evaluate ")]
            expected = [s for s in scores if s.conversation_id == conversation.id and s.turn_index == turn.index]
            assert len(judged) == len(expected) > 0
            for span in judged:
                (event,) = span.events
                assert event.name == "gen_ai.evaluation.result"
                e = attributes(event.attributes)
                score = next(s for s in expected if s.metric == e["gen_ai.evaluation.name"])
                if score.value is None:
                    assert "error.type" in e and "gen_ai.evaluation.score.value" not in e
                else:
                    assert e["gen_ai.evaluation.score.value"] == pytest.approx(score.value)
                    assert e.get("gen_ai.evaluation.explanation") == (score.reason or None)
                assert attributes(span.attributes)["gen_ai.request.model"] == "scripted/judge"


def test_the_same_run_gives_the_same_trace_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scored_run(tmp_path, capsys)
    seen = []
    for _ in range(2):
        with Receiver() as receiver:
            assert main(["export", str(store.path), "--format", "otlp", "--endpoint", receiver.url]) == 0
        seen.append(sorted({s.trace_id for s in receiver.spans}))
    assert seen[0] == seen[1]


def test_a_collector_that_is_not_there_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # the SDK retries with backoff until then

    store = scored_run(tmp_path, capsys)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["export", str(store.path), "--format", "otlp", "--endpoint", f"http://127.0.0.1:{port}"])
    assert code == 2
    assert "did not take" in capsys.readouterr().err
