"""Slow: `ragdive demo` for real, in a subprocess, on the packaged Gemma-3-270M (every role) and the packaged
corpus. It checks that the offline pipeline runs end to end and stays honest, never the quality of the tiny model's
questions, answers or scores."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragdive.store import RunStore, latest_scores

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow


def test_demo_runs_offline_end_to_end(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "ragdive", "demo", "--output", "out", "--conversations", "1", "--max-turns", "2"],
        cwd=tmp_path,  # the run, the model-call cache and the BM25 index all go under ./out
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tiny base model" in proc.stderr and "not meaningful" in proc.stderr
    assert "per-metric summary" in proc.stdout and "ragdive runs show" in proc.stdout
    assert "--by persona" in proc.stdout

    [run_dir] = [p for p in (tmp_path / "out").iterdir() if (p / "manifest.json").is_file()]
    assert str(run_dir.relative_to(tmp_path)) in proc.stdout  # printed as given: relative to the cwd
    assert (tmp_path / "out" / ".cache" / "index").is_dir()  # the index is not written into the package
    store = RunStore.open(run_dir)
    manifest = store.read_manifest()
    assert manifest.status == "finished" and manifest.error is None
    assert set(manifest.models) == {"user", "validator", "target", "judge"}
    assert set(manifest.models.values()) == {"llamacpp/default"}

    [conversation] = store.conversations().records
    assert conversation.status in ("finished", "ended_early") and conversation.turns
    for turn in conversation.turns:
        assert turn.error is not None or turn.answer  # the reference RAG answered (or its failure is on the turn)
    scores = latest_scores(store.scores().records)
    assert len(scores) == 4 * len(conversation.turns) + 2  # every item has a line: a value or unscored
    for s in scores:
        assert (s.value is not None and 0.0 <= s.value <= 1.0) or (s.value is None and s.unscored_reason), s
        assert s.judge_model == "llamacpp/default"

    # the base prompt profile (chosen for llamacpp/default): quotes come from the documents' own sentences, so no
    # draft fails the evidence check; turn 1 is `initial` with one question; bounded JSON is never cut off
    for turn in conversation.turns:
        for attempt in turn.attempts:
            assert "evidence_not_in_document" not in attempt.verdict.failed_checks, attempt.verdict.reason
        assert not any("EOF while parsing" in e for e in turn.generation_errors), turn.generation_errors
    first = conversation.turns[0]
    assert first.question_type == "initial" and first.rag_input == first.standalone_question
    assert not [s for s in scores if "EOF while parsing" in (s.unscored_reason or "")]
    assert not [s for s in scores if "control character" in (s.unscored_reason or "")]
    assert "(n=" in proc.stdout  # every mean with its n; one conversation is too few, and the summary says so
    assert "too few for the mean or its CI to mean anything" in proc.stdout or all(not s.scored for s in scores)

    t = manifest.totals
    assert t.conversations == 1 and t.turns == len(conversation.turns)
    assert t.scores == len(scores) and t.unscored == sum(not s.scored for s in scores)
    assert t.prompt_tokens > 0 and t.cost_usd == 0.0  # a local model costs nothing, and that is known
    print(f"ragdive demo, 1 conversation x 2 turns: {elapsed:.0f} s wall")
