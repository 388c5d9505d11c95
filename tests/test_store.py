from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ragdive.errors import StoreError
from ragdive.records import SCHEMA_VERSION, FailedCheck, Rejection, RunManifest, Score
from ragdive.redaction import MASK, redact, redact_text
from ragdive.store import RunRecorder, RunStore, list_runs, new_run_id, process_alive, shown_status, this_process

from .factories import make_conversation, make_draft


def test_records_round_trip_through_the_store(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, config={"seed": 1}, seed=1)
    conv = make_conversation("c1", turns=3)
    store.append_conversation(conv)
    rej = Rejection(
        conversation_id="c1",
        turn_index=1,
        attempt=1,
        categories=[FailedCheck.NOT_STANDALONE],
        reason="refers to 'it'",
        draft=make_draft(1),
    )
    store.append_rejection(rej)
    score = Score(conversation_id="c1", turn_index=0, metric="faithfulness", value=0.5, reason="1 of 2")
    unscored = Score.unscored(conversation_id="c1", metric="correctness", reason="judge returned garbage")
    store.append_scores([score, unscored])

    again = RunStore.open(store.path)
    assert again.conversations().records == [conv]
    assert again.rejections().records == [rej]
    assert again.scores().records == [score, unscored]
    assert again.scores().records[1].value is None
    assert again.finished_conversation_ids() == {"c1"}
    manifest = again.read_manifest()
    assert manifest.run_id == store.path.name
    assert manifest.schema_version == SCHEMA_VERSION


def test_a_torn_last_line_is_skipped_and_reported(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    store.append_conversation(make_conversation("c1"))
    store.append_conversation(make_conversation("c2"))
    path = store.path / "conversations.jsonl"
    whole = path.read_bytes()
    # simulate a kill in the middle of writing a third record
    path.write_bytes(whole + make_conversation("c3").model_dump_json().encode()[:40])

    result = store.conversations()
    assert [c.id for c in result.records] == ["c1", "c2"]
    assert result.torn_lines == [3]
    assert "line 3" in result.problems[0]

    # the next append cuts the torn line off first (kept in a side file): the file is valid JSON Lines again
    store.append_conversation(make_conversation("c4"))
    result = store.conversations()
    assert [c.id for c in result.records] == ["c1", "c2", "c4"]
    assert result.torn_lines == []
    side = [json.loads(line) for line in (store.path / "conversations.jsonl.torn").read_text().splitlines()]
    assert [entry["text"] for entry in side] == [make_conversation("c3").model_dump_json()[:40]]
    assert side[0]["offset"] == len(whole)


def test_valid_json_that_is_not_a_record_is_corruption(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    (store.path / "evaluations.jsonl").write_text('{"metric": "x"}\n')
    with pytest.raises(StoreError, match="line 1"):
        store.scores()


def test_secrets_are_redacted_at_any_depth_before_writing(tmp_path: Path) -> None:
    config = {
        "models": {"judge": {"model": "openai/gpt", "api_key": "sk-live-123", "params": {"max_tokens": 5}}},
        "target": {"headers": {"Authorization": "Bearer abc", "X-Trace": "t"}},
        "deep": [{"inner": {"client_secret": "s", "password": "p", "access_token": "tok"}}],
    }
    store = RunStore.create(tmp_path, config=config)
    text = (store.path / "manifest.json").read_text()
    for secret in ("sk-live-123", "Bearer abc", '"s"', '"p"', '"tok"'):
        assert secret not in text
    written = json.loads(text)["config"]
    assert written["models"]["judge"]["api_key"] == MASK
    assert written["models"]["judge"]["params"]["max_tokens"] == 5  # a token count is not a secret
    assert written["target"]["headers"]["X-Trace"] == MASK  # every header value: ragdive cannot tell which is secret
    assert written["deep"][0]["inner"] == {"client_secret": MASK, "password": MASK, "access_token": MASK}


def test_redaction_of_records_written_as_jsonl(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    score = Score(conversation_id="c", metric="m", value=1.0, details={"request": {"headers": {"api-key": "zzz"}}})
    store.append_score(score)
    assert "zzz" not in (store.path / "evaluations.jsonl").read_text()
    assert redact({"a": None, "token": ""}) == {"a": None, "token": ""}


def test_manifest_updates_are_atomic_and_leave_no_temp_files(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    for n in range(5):
        store.update_manifest(name=f"try {n}", models={"user": f"scripted/{n}"})
    manifest = store.read_manifest()
    assert manifest.name == "try 4" and manifest.models == {"user": "scripted/4"}
    assert sorted(p.name for p in store.path.iterdir()) == ["manifest.json"]
    assert manifest.updated >= manifest.created


def test_run_ids_sort_by_creation_and_are_unique(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    ids = [new_run_id(t0 + timedelta(seconds=s)) for s in (0, 1, 61, 3600)]
    assert ids == sorted(ids)
    assert len({new_run_id(t0) for _ in range(50)}) == 50


def test_list_runs_and_errors(tmp_path: Path) -> None:
    a = RunStore.create(tmp_path, run_id="20260101-000000-aaaaaa")
    b = RunStore.create(tmp_path, run_id="20260102-000000-bbbbbb")
    (tmp_path / "not-a-run").mkdir()
    assert [s.path for s in list_runs(tmp_path)] == [a.path, b.path]
    with pytest.raises(StoreError, match="no runs folder"):
        list_runs(tmp_path / "missing")
    with pytest.raises(StoreError, match="not a ragdive run"):
        RunStore.open(tmp_path / "not-a-run")
    with pytest.raises(StoreError, match="already exists"):
        RunStore.create(tmp_path, run_id="20260101-000000-aaaaaa")


def test_score_is_value_xor_unscored() -> None:
    with pytest.raises(ValueError):
        Score(conversation_id="c", metric="m")
    with pytest.raises(ValueError):
        Score(conversation_id="c", metric="m", value=0.0, unscored_reason="x")
    assert RunManifest(run_id="x").totals.cost_usd is None  # unknown cost is not 0


def _reaped_pid() -> int:
    """The pid of a process that has exited and been reaped by its parent."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_mark_running_records_this_process_and_old_manifests_still_read(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    assert store.read_manifest().process is None
    RunRecorder(store).start()
    process = store.read_manifest().process
    assert process is not None and process.pid == os.getpid() and process.host == socket.gethostname()

    data = json.loads((store.path / "manifest.json").read_text())
    del data["process"]  # as ragdive wrote manifests before it recorded the process
    (store.path / "manifest.json").write_text(json.dumps(data))
    assert store.read_manifest().process is None
    assert shown_status(store.read_manifest()) == "running"  # nothing to tell by: taken at its word


def test_a_running_run_whose_process_is_gone_shows_as_stale(tmp_path: Path) -> None:
    me = this_process()
    running = RunManifest(run_id="r", status="running", process=me)
    assert shown_status(running) == "running"
    dead = running.model_copy(update={"process": me.model_copy(update={"pid": _reaped_pid()})})
    assert process_alive(dead.process) is False and shown_status(dead) == "stale"
    elsewhere = dead.model_copy(update={"process": dead.process.model_copy(update={"host": "another-machine"})})
    assert process_alive(elsewhere.process) is None and shown_status(elsewhere) == "running"
    # only a run marked running can be stale; a finished one says how it ended
    assert shown_status(dead.model_copy(update={"status": "finished"})) == "finished"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to tell a reused pid")
def test_a_reused_pid_or_a_reboot_shows_as_stale() -> None:
    me = this_process()
    assert me.start_ticks is not None
    reused = RunManifest(
        run_id="r", status="running", process=me.model_copy(update={"start_ticks": me.start_ticks + 1})
    )
    assert shown_status(reused) == "stale"
    if me.boot_id:
        rebooted = RunManifest(run_id="r", status="running", process=me.model_copy(update={"boot_id": "other-boot"}))
        assert shown_status(rebooted) == "stale"


def test_secrets_in_urls_are_masked_wherever_the_url_appears(tmp_path: Path) -> None:
    config = {
        "target": {"url": "https://rag.example/ask?key=sk-q-1&lang=en", "description": "http POST https://u:pw-2@h/x"},
        "models": {"judge": {"base_url": "http://h:8000/v1?access_token=tok-3;api-version=2"}},
    }
    store = RunStore.create(tmp_path, config=config)
    text = (store.path / "manifest.json").read_text()
    for secret in ("sk-q-1", "pw-2", "tok-3"):
        assert secret not in text
    written = json.loads(text)["config"]
    # a configured URL: every query value (ragdive cannot tell ?code= of an Azure Function from ?lang=)
    assert written["target"]["url"] == f"https://rag.example/ask?key={MASK}&lang={MASK}"
    assert written["target"]["description"] == f"http POST https://u:{MASK}@h/x"
    assert written["models"]["judge"]["base_url"] == f"http://h:8000/v1?access_token={MASK};api-version={MASK}"
    # a URL in free text (an answer): only what looks secret
    assert redact_text("see https://docs.example/page?q=tokens&sig=abc for details") == (
        f"see https://docs.example/page?q=tokens&sig={MASK} for details"
    )
