"""One run split into parts on a local Ray instance (`ragdive run --executor ray --shards N`): the same records as
the run made locally, one run directory written by the driver alone, every call's spend counted once; a run cut
off midway resumes with another number of parts (or locally) to the same records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragdive.cli.main import main
from ragdive.store.spend_journal import read_journal

from ..pipeline.sweep_helpers import base_experiment
from .kill import kill_a_worker_mid_run
from .records import run_records, same_work

pytest.importorskip("ray", reason="the Ray executor's tests need the extra: pip install 'ragdive[ray]'")

pytestmark = pytest.mark.slow


def _experiment(tmp_path: Path, conversations: int = 6) -> Path:
    data = base_experiment(tmp_path)
    data["simulation"].update({"conversations": conversations, "max_turns": 2, "concurrency": 4})
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _run(experiment: Path, out: Path, *extra: str) -> Path:
    assert main(["run", str(experiment), "--output", str(out), "--no-cache", *extra]) == 0
    (run,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    return run


def _calls(records: dict[str, Any]) -> dict[tuple[str, str], int]:
    return {(s["role"], s["model"]): s["calls"] for s in records["totals"]["spend"]}


def test_a_run_in_parts_on_ray_writes_the_local_run_s_records_and_spend(local_ray: Any, tmp_path: Path) -> None:
    experiment = _experiment(tmp_path)
    local_run = _run(experiment, tmp_path / "local")
    run = _run(experiment, tmp_path / "ray", "--executor", "ray", "--shards", "3")
    distributed = run_records(run)
    assert distributed["status"] == "finished" and len(distributed["conversations"]) == 6
    assert distributed == run_records(local_run)  # conversations, rejections, scores, score lines, counts, spend
    assert sum(_calls(distributed).values()) > 0
    # the same files, the spend journal too: each part's worker journal is mirrored into the run's own
    files = [sorted(p.name for p in d.iterdir()) for d in (run, local_run)]
    assert files[0] == files[1] and "spend.jsonl" in files[0]
    journaled = {key: sum(line.calls for line in lines) for key, lines in read_journal(run).items()}
    assert journaled == _calls(distributed)  # the manifest's spend is the journal's, call for call


def test_a_run_in_parts_cut_off_midway_resumes_with_other_parts_to_the_same_records(
    local_ray: Any, tmp_path: Path
) -> None:
    experiment = _experiment(tmp_path, conversations=8)
    local = run_records(_run(experiment, tmp_path / "local"))
    run = _run(experiment, tmp_path / "ray", "--executor", "ray", "--shards", "2")
    # as a kill midway leaves it: some conversations gone (with their scores), some scores of the others gone
    conversations = (run / "conversations.jsonl").read_text().splitlines(keepends=True)
    kept = conversations[: len(conversations) // 2]
    kept_ids = {json.loads(line)["id"] for line in kept}
    scores = [
        line
        for line in (run / "evaluations.jsonl").read_text().splitlines(keepends=True)
        if json.loads(line)["conversation_id"] in kept_ids
    ]
    (run / "conversations.jsonl").write_text("".join(kept))
    (run / "evaluations.jsonl").write_text("".join(scores[: len(scores) // 2]))
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    cut_spend = _calls(run_records(run))

    resumed = run_records(_run_resume(experiment, run, "--executor", "ray", "--shards", "3"))
    same_work({"run": resumed}, {"run": local})  # every conversation and score once, spend never less
    assert all(resumed_calls >= cut_spend[key] for key, resumed_calls in _calls(resumed).items() if key in cut_spend)
    assert sum(_calls(resumed).values()) > sum(cut_spend.values())  # the redone work was paid for, and counted


def _run_resume(experiment: Path, run: Path, *extra: str) -> Path:
    assert main(["run", str(experiment), "--resume", str(run), "--no-cache", *extra]) == 0
    return run


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds Ray's worker processes through /proc")
def test_a_part_whose_worker_is_killed_fails_the_run_keeping_the_rest_and_resume_completes_it(
    local_ray: Any, tmp_path: Path
) -> None:
    """SIGKILL of one part's worker while it scores: the other part goes on to its end, the run ends `failed` with
    one readable error and a non-zero exit, every finished record stays on disk, and a local --resume completes
    it to the records of a run made whole."""
    experiment = _experiment(tmp_path)
    local = run_records(_run(experiment, tmp_path / "local"))
    out = tmp_path / "ray"
    args = ["run", str(experiment), "--output", str(out), "--no-cache", "--executor", "ray", "--shards", "2"]
    killed, code, err = kill_a_worker_mid_run(args, "*/evaluations.jsonl", out)
    assert killed, f"no worker was caught mid-run (exit {code}): {err[-2000:]}"
    assert code != 0 and "Traceback" not in err and "never retrieved" not in err
    assert "ray worker" in err and "--resume" in err
    (run,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    cut = run_records(run)
    assert cut["status"] == "failed"
    assert len(cut["conversations"]) >= 3  # the other part's three, at least: it ran to its end

    resumed = run_records(_run_resume(experiment, run))
    same_work({"run": resumed}, {"run": local}, all_spend_recorded=False)


def test_the_python_api_splits_a_run_on_ray_as_the_command_line_does(local_ray: Any, tmp_path: Path) -> None:
    import ragdive

    experiment = _experiment(tmp_path, conversations=4)
    local = run_records(_run(experiment, tmp_path / "local"))
    result = ragdive.run(experiment, output=tmp_path / "ray", no_cache=True, executor="ray", shards=2)
    assert result.status == "finished" and set(result.metrics) == {
        "faithfulness",
        "context_precision",
        "context_recall",
        "correctness",
        "forgetfulness",
        "context_retention",
    }
    assert run_records(result.run_dir) == local
