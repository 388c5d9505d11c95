"""A run sent to a real local Arize Phoenix (slow): `ragdive export --format otlp` to Phoenix's OTLP/HTTP endpoint,
and the spans read back through Phoenix's REST API: one root span per conversation with its id, one evaluation
span per score with its `gen_ai.evaluation.result` event. Phoenix is large and pins its own dependencies, so it
lives in a virtual environment of its own: the `phoenix` command on PATH, or RAGDIVE_PHOENIX naming it (.ci/run
installs it there); without it the test skips and says so."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")

from ragdive.cli.main import main  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.pipeline.helpers import write_experiment  # noqa: E402

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    command = os.environ.get("RAGDIVE_PHOENIX") or shutil.which("phoenix")
    if not command or not Path(command).exists():
        pytest.skip("Arize Phoenix is not installed: set RAGDIVE_PHOENIX to its `phoenix` command (see .ci/run)")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
    }
    log = (tmp_path / "phoenix.log").open("w")
    proc = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"phoenix exited: {(tmp_path / 'phoenix.log').read_text()[-2000:]}")
            try:
                _get(f"{base}/v1/projects")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("phoenix did not start within 120 s")
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _spans(base: str) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = _get(f"{base}/v1/projects/default/spans?limit=500" + (f"&cursor={cursor}" if cursor else ""))
        spans += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def test_a_run_sent_to_phoenix_reads_back_with_its_conversations_and_scores(
    phoenix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(write_experiment(tmp_path))]) == 0
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    assert main(["export", str(store.path), "--format", "otlp", "--endpoint", phoenix]) == 0
    conversations, scores = store.current_conversations(), store.current_scores()
    deadline = time.monotonic() + 30
    while True:  # Phoenix ingests in the background
        spans = _spans(phoenix)
        roots = [s for s in spans if not s["parent_id"]]
        judged = [s for s in spans if s["name"].startswith("evaluate ")]
        if (len(roots), len(judged)) == (len(conversations), len(scores)) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert {r["attributes"]["gen_ai.conversation.id"] for r in roots} == {c.id for c in conversations}
    assert len(judged) == len(scores) > 0
    events = [e for s in judged for e in s["events"]]
    assert len(events) == len(scores) and {e["name"] for e in events} == {"gen_ai.evaluation.result"}
