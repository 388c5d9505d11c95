"""`ragdive run` when the local model's worker dies (a native crash, as a llama.cpp build for another CPU does):
one clear error naming cause and fix, exit 2, the run `failed` with that error, and everything finished kept.
The worker is ragdive.testing.llama_worker_double, which calls os.abort() after N requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.store import RunStore, list_runs

from .helpers import write_experiment


def crashing_model(tmp_path: Path, abort_after: int) -> str:
    gguf = tmp_path / f"crash-after-{abort_after}.gguf"
    gguf.write_bytes(b"not read by the double")
    options = f"{{worker_module: ragdive.testing.llama_worker_double, worker_args: [--abort-after, '{abort_after}']}}"
    return f"{{model: 'llamacpp/{gguf}', options: {options}}}"


def only_run(tmp_path: Path) -> RunStore:
    runs = list_runs(tmp_path / "runs")
    assert len(runs) == 1
    return runs[0]


def test_a_judge_crash_while_scoring_fails_the_run_and_keeps_conversations_and_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # request 1 is the self-check before simulating, 2-4 score three items, request 5 crashes the worker
    config = write_experiment(tmp_path, judge_model=crashing_model(tmp_path, abort_after=4))
    assert main(["run", str(config), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "SIGABRT" in err and "scripts/build_llama.py" in err
    assert "Traceback" not in err
    store = only_run(tmp_path)
    manifest = store.read_manifest()
    assert manifest.status == "failed" and manifest.error and "SIGABRT" in manifest.error
    assert len(store.conversations().records) == 2  # the simulation finished before the judge died
    assert len(store.scores().records) >= 1  # what was scored before the crash is on disk


def test_a_build_that_crashes_at_the_first_decode_fails_before_anything_is_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_experiment(tmp_path, judge_model=crashing_model(tmp_path, abort_after=0))
    assert main(["run", str(config), "--no-cache"]) == 2
    assert "SIGABRT" in capsys.readouterr().err
    store = only_run(tmp_path)
    manifest = store.read_manifest()
    assert manifest.status == "failed" and "SIGABRT" in (manifest.error or "")
    assert store.conversations().records == []  # the self-check ran first: no user or validator call spent
    assert manifest.totals.conversations == 0 and manifest.totals.rejections == 0
