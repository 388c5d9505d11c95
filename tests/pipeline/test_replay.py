"""Frozen-user replay: a run's recorded user messages sent to another target, scored, paired turn by turn with the
source in compare, resumable, and honest about what it is (kind replay, a note)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ragdive
from ragdive.cli.main import main
from ragdive.records import SCHEMA_VERSION
from ragdive.store import RunStore, list_runs
from tests.pipeline.helpers import write_experiment
from tests.simulation.helpers import DOCS

CALLS: list[tuple[str, list[dict[str, str]]]] = []


def other_answer(message: str, history: list[dict[str, str]]) -> dict[str, Any]:
    """Another system under test: answers with the bridge document, and says which turn of its own it is on."""
    CALLS.append((message, history))
    assistant = sum(m["role"] == "assistant" for m in history)
    return {
        "answer": f"reply {assistant + 1}: {DOCS[1].text}",
        "contexts": [{"text": DOCS[1].text, "source": "bridge"}],
    }


def flaky(message: str, history: list[dict[str, str]]) -> dict[str, Any]:
    """Fails on the second turn of each conversation: a target failure ends a replayed conversation early."""
    if history:
        raise ConnectionError("connection reset")
    return other_answer(message, history)


def target_file(
    tmp_path: Path, callable_: str = "tests.pipeline.test_replay:other_answer", name: str = "t.yaml"
) -> Path:
    path = tmp_path / name
    path.write_text(f"type: python\ncallable: '{callable_}'\n")
    return path


@pytest.fixture
def source(tmp_path: Path) -> RunStore:
    config = write_experiment(tmp_path, max_turns=3)
    assert main(["run", str(config)]) == 0
    (store,) = list_runs(tmp_path / "runs")
    return store


def replay_run(tmp_path: Path, source: RunStore) -> RunStore:
    (store,) = [r for r in list_runs(tmp_path / "runs") if r.path != source.path]
    return store


def test_replay_sends_the_recorded_messages_and_scores_the_new_answers(
    tmp_path: Path, source: RunStore, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    CALLS.clear()
    assert main(["replay", str(source.path), "--target", str(target_file(tmp_path))]) == 0
    captured = capsys.readouterr()
    out = captured.out
    replay = replay_run(tmp_path, source)
    assert out.strip().splitlines()[-1] == str(replay.path)  # the run directory, last on stdout
    assert replay.report_path.is_file()
    manifest, origin = replay.read_manifest(), source.read_manifest()
    assert manifest.kind == "replay" and manifest.source_run == origin.run_id and manifest.status == "finished"
    assert manifest.schema_version == SCHEMA_VERSION and "reaction to the source target's answers" in (
        manifest.note or ""
    )
    assert manifest.config["target"]["callable"] == "tests.pipeline.test_replay:other_answer"
    assert manifest.config["simulation"]["concurrency"] == 1  # the source's pace; its other simulation settings are not

    before = {c.id: c for c in source.current_conversations()}
    after = {c.id: c for c in replay.current_conversations()}
    assert after.keys() == before.keys()
    for cid, new in after.items():
        old = before[cid]
        assert [t.index for t in new.turns] == [t.index for t in old.turns]
        for o, n in zip(old.turns, new.turns, strict=True):
            kept = ("rag_input", "standalone_question", "ground_truth", "question_type", "evidence")
            assert all(getattr(o, f) == getattr(n, f) for f in kept)
            assert n.answer == f"reply {n.index + 1}: {DOCS[1].text}" and n.contexts[0].source == "bridge"
            assert n.attempts == []  # no validator ran in a replay
    assert sorted(m for m, _ in CALLS) == sorted(t.rag_input for c in source.current_conversations() for t in c.turns)
    # the new target saw its own earlier answers, not the source target's
    assert all(h["content"].startswith("reply ") for _, history in CALLS for h in history if h["role"] == "assistant")

    scores = replay.current_scores()
    turns = sum(len(c.turns) for c in after.values())
    assert {s.conversation_id for s in scores} == set(after) and manifest.totals.scores == len(scores)
    # what it did, said as static mode and `run` say it (cli.epilogue.print_sent): sent, target errors, scoring
    assert f"{len(after)} conversations replayed, 0 target errors" in captured.err
    assert f"{len(scores)} scores written (0 unscored), 0 already scored" in captured.err
    (judge,) = [line for line in replay.read_manifest().totals.spend if line.role == "judge"]
    assert judge.calls == len(scores)  # one call per score, counted once (not again by the replay's recorder)
    correct_then = {
        (s.conversation_id, s.turn_index): s.value for s in source.current_scores() if s.metric == "correctness"
    }
    correct_now = {(s.conversation_id, s.turn_index): s.value for s in scores if s.metric == "correctness"}
    assert correct_now.keys() == correct_then.keys() and len(correct_now) == turns
    # the new answers were judged against the recorded ground truths (the rule judge: the truth is in the answer)
    turn_of = {(c.id, t.index): t for c in after.values() for t in c.turns}
    assert correct_now == {k: float(t.ground_truth.lower() in (t.answer or "").lower()) for k, t in turn_of.items()}
    assert correct_now != correct_then

    (comparison,) = ragdive.compare(source.path, replay.path, metrics=["correctness"])
    (row,) = comparison.metrics
    assert row.paired_on == "turn" and row.paired.n_pairs == turns
    assert main(["compare", str(source.path), str(replay.path)]) == 0
    assert "shared turns" in capsys.readouterr().out
    assert main(["runs", "show", str(replay.path)]) == 0
    assert f"replay of  {origin.run_id} (frozen-user replay" in capsys.readouterr().out


def test_a_target_failure_ends_the_replayed_conversation_early(tmp_path: Path, source: RunStore) -> None:
    result = ragdive.replay(source.path, target_file(tmp_path, "tests.pipeline.test_replay:flaky"), evaluate=False)
    assert result.status == "finished"
    replay = RunStore.open(result.run_dir)
    for conv in replay.current_conversations():
        assert conv.status == "ended_early" and "failed on turn 2" in (conv.end_reason or "")
        assert [t.error is None for t in conv.turns] == [True, False]
    assert replay.scores().records == []  # --no-evaluate


def test_resume_replays_only_what_is_missing_and_refuses_another_target(
    tmp_path: Path, source: RunStore, capsys: pytest.CaptureFixture[str]
) -> None:
    target = target_file(tmp_path)
    assert main(["replay", str(source.path), "--target", str(target), "--no-evaluate"]) == 0
    replay = replay_run(tmp_path, source)
    lines = (replay.path / "conversations.jsonl").read_text().splitlines()
    assert len(lines) == 2
    (replay.path / "conversations.jsonl").write_text(lines[0] + "\n")  # killed after the first conversation
    capsys.readouterr()
    CALLS.clear()
    assert main(["replay", str(source.path), "--target", str(target), "--resume", str(replay.path)]) == 0
    assert "replaying 1 conversations" in capsys.readouterr().err
    missing = json.loads(lines[1])["id"]
    assert {m for m, _ in CALLS} == {
        t.rag_input for c in source.current_conversations() if c.id == missing for t in c.turns
    }
    assert len(replay.conversations().records) == 2 and replay.read_manifest().totals.conversations == 2
    assert replay.current_scores() and replay.read_manifest().status == "finished"

    other = target_file(tmp_path, "tests.pipeline.test_replay:flaky", name="other.yaml")
    assert main(["replay", str(source.path), "--target", str(other), "--resume", str(replay.path)]) == 2
    err = capsys.readouterr().err
    assert "another target (target.callable differ)" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing-run", "no run directory"),
        ("bad-target", "t.yaml: target.top_k: got 0"),
        ("missing-target", "does not exist"),
    ],
)
def test_bad_input_is_one_error_line(
    tmp_path: Path, source: RunStore, capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    run, target = source.path, tmp_path / "t.yaml"
    if setup == "missing-run":
        run = tmp_path / "nope"
        target_file(tmp_path)
    elif setup == "bad-target":
        target.write_text("type: reference\ntop_k: 0\n")
    capsys.readouterr()
    assert main(["replay", str(run), "--target", str(target)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") == 0
    assert len(list_runs(tmp_path / "runs")) == 1  # nothing created


def test_an_experiment_file_gives_its_target_section(tmp_path: Path, source: RunStore) -> None:
    experiment = tmp_path / "exp.yaml"
    experiment.write_text("name: x\ntarget: {type: python, callable: 'tests.pipeline.test_replay:other_answer'}\n")
    result = ragdive.replay(source.path, experiment, metrics=["correctness"])
    assert result.status == "finished" and set(result.metrics) == {"correctness"}
    assert RunStore.open(result.run_dir).read_manifest().config["models"] == source.read_manifest().config["models"]


def test_ctrl_c_while_scoring_marks_the_replay_interrupted_and_resume_finishes_it(
    tmp_path: Path, source: RunStore
) -> None:
    root = Path(__file__).resolve().parents[2]
    script = "import sys; from ragdive.cli.main import main; sys.exit(main(sys.argv[1:]))"
    command = [sys.executable, "-c", script, "replay", str(source.path), "--target", str(target_file(tmp_path))]
    proc = subprocess.Popen(
        command,
        cwd=root,
        # 0.6 s a judge call: the SIGINT after two scores lands mid-scoring even on a loaded machine (at 0.15 s
        # the 28 calls ended in ~4 s and a starved test process sent it too late)
        env={**os.environ, "PIPETEST_SLOW_JUDGE": "0.6"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        scored = [f for f in (tmp_path / "runs").glob("*/evaluations.jsonl") if source.path not in f.parents]
        if scored and scored[0].read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "continue with --resume" in stderr
    replay = RunStore.open(Path(stdout.strip().splitlines()[-1]))
    assert replay.read_manifest().status == "interrupted" and len(replay.conversations().records) == 2
    written = len(replay.scores().records)
    total = len(source.current_scores())
    assert 2 <= written < total

    assert main([*command[3:], "--resume", str(replay.path)]) == 0
    keys = [(s.conversation_id, s.turn_index, s.metric) for s in replay.scores().records]
    assert len(keys) == len(set(keys)) == total  # nothing scored twice, nothing missing
    assert len(replay.conversations().records) == 2 and replay.read_manifest().status == "finished"
