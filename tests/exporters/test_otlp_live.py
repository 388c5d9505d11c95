"""`ragdive run --otel URL` / `observability.otlp_endpoint`: the run's traces sent as it goes to a real OTLP/HTTP
receiver on loopback, with the span tree and trace ids `ragdive export --format otlp` sends after the fact."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")
pytest.importorskip("opentelemetry.proto", reason="the otel extra (opentelemetry-proto) is not installed")

from ragdive import api  # noqa: E402
from ragdive.cli.main import main  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.pipeline.helpers import write_experiment  # noqa: E402

from .otlp_receiver import Receiver, attributes  # noqa: E402


def tree(spans: list) -> Counter:
    """Each span as (its trace, its name, its parent's name): the shape two senders must agree on."""
    by_id = {s.span_id: s for s in spans}
    return Counter((s.trace_id, s.name, by_id[s.parent_span_id].name if s.parent_span_id else None) for s in spans)


def test_run_otel_sends_the_exports_span_tree_as_it_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_experiment(tmp_path, extra="")
    with Receiver() as receiver:
        assert main(["run", str(config), "--otel", receiver.url]) == 0
        sent_live = list(receiver.spans)
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    conversations, scores = store.current_conversations(), store.current_scores()
    assert len({s.trace_id for s in sent_live}) == len(conversations) > 0
    judged = [s for s in sent_live if s.name.startswith("evaluate ")]
    assert len(judged) == len(scores) > 0
    for span in judged:
        (event,) = span.events
        assert event.name == "gen_ai.evaluation.result" and span.parent_span_id  # under its turn or conversation
        assert attributes(span.attributes)["gen_ai.request.model"] == "scripted/judge"
    with Receiver() as receiver:
        assert main(["export", str(store.path), "--format", "otlp", "--endpoint", receiver.url]) == 0
    assert tree(sent_live) == tree(receiver.spans)


def test_the_console_entry_point_sends_every_span_before_the_process_ends(tmp_path: Path) -> None:
    """`python -m ragdive run --otel` ends without the interpreter's teardown (ragdive.cli.fast_exit): every span
    is sent before that, one per conversation's trace and one per score."""
    config = write_experiment(tmp_path)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    with Receiver() as receiver:
        done = subprocess.run(
            [sys.executable, "-m", "ragdive", "run", str(config), "--otel", receiver.url],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=root,
            env=env,
            check=False,
        )
        sent = list(receiver.spans)
    assert done.returncode == 0, done.stderr
    store = RunStore.open(Path(done.stdout.strip().splitlines()[-1]))
    assert len({s.trace_id for s in sent}) == len(store.current_conversations()) > 0
    assert len([s for s in sent if s.name.startswith("evaluate ")]) == len(store.current_scores()) > 0


def test_the_config_sends_live_through_the_api(tmp_path: Path) -> None:
    config = write_experiment(tmp_path, extra="")
    with Receiver() as receiver:
        result = api.run(config, {"observability.otlp_endpoint": receiver.url})
    assert result.status == "finished"
    roots = [s for s in receiver.spans if not s.parent_span_id]
    ids = {attributes(r.attributes)["gen_ai.conversation.id"] for r in roots}
    assert ids == {c.id for c in RunStore.open(result.run_dir).current_conversations()}


def test_a_collector_that_is_not_there_fails_the_command_after_the_run_is_on_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    config = write_experiment(tmp_path, extra="")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["run", str(config), "--otel", f"http://127.0.0.1:{port}"]) == 2
    assert "did not take" in capsys.readouterr().err
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert RunStore.open(run_dir).current_conversations()
