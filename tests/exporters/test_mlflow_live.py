"""MLflow live (`run --mlflow URI`, `observability.mlflow_tracking_uri`) and a sweep's MLflow export, against a real
local tracking store (sqlite) read back with MlflowClient."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlflow", reason="the mlflow extra is not installed")

from ragdive import api  # noqa: E402
from ragdive.analysis import RunScores, summarize_run  # noqa: E402
from ragdive.api import Observer  # noqa: E402
from ragdive.cli.main import main  # noqa: E402
from ragdive.records import Conversation, Totals  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.pipeline.helpers import write_experiment  # noqa: E402
from tests.pipeline.sweep_helpers import HISTORIES, write_sweep  # noqa: E402


def only_run(uri: str, experiment: str):  # type: ignore[no-untyped-def]
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    return client, client.search_runs([found.experiment_id])


def test_run_mlflow_is_an_mlflow_run_from_the_start_with_progress_steps_and_the_export_s_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # MLflow's default artifact root is relative to the working directory
    monkeypatch.setattr("ragdive.api.live_mlflow.PROGRESS_EVERY_S", 0.0)  # every event a step
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "live-eval")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(["run", str(write_experiment(tmp_path)), "--mlflow", uri]) == 0
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))

    client, (run,) = only_run(uri, "live-eval")
    assert run.info.status == "FINISHED" and run.data.tags["ragdive.status"] == "finished"
    assert run.data.tags["ragdive.run_id"] == store.read_manifest().run_id
    assert run.data.params["simulation.max_turns"] == "2"
    for s in summarize_run(RunScores.from_store(store)):  # the numbers the summary prints
        assert run.data.metrics[f"{s.metric}/n_scored"] == s.n_scored
        if s.mean is not None:
            assert run.data.metrics[f"{s.metric}/mean"] == pytest.approx(s.mean)
    progress = client.get_metric_history(run.info.run_id, "progress/conversations")
    assert [h.value for h in sorted(progress, key=lambda h: h.step)][-1] == len(store.current_conversations())
    assert len({h.step for h in progress}) > 1  # logged as the run went, not once at the end
    scores = client.get_metric_history(run.info.run_id, "progress/scores")
    assert max(h.value for h in scores) == sum(s.scored for s in store.current_scores())
    assert "progress/cost_usd" not in run.data.metrics  # the scripted models' cost is unknown: not logged as 0
    assert {"turns.json", "manifest.json", "tables"} <= {a.path for a in client.list_artifacts(run.info.run_id)}


def test_the_console_entry_point_ends_the_mlflow_run_before_the_process_ends(tmp_path: Path) -> None:
    """`python -m ragdive run --mlflow` ends without the interpreter's teardown (ragdive.cli.fast_exit): the MLflow
    run is ended, with the summary's metrics, before that."""
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)]),
        "MLFLOW_EXPERIMENT_NAME": "entry-point",
    }
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", "run", str(write_experiment(tmp_path)), "--mlflow", uri],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,  # MLflow's default artifact root is relative to the working directory
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    store = RunStore.open(Path(done.stdout.strip().splitlines()[-1]))
    _, (run,) = only_run(uri, "entry-point")
    assert run.info.status == "FINISHED" and run.data.tags["ragdive.status"] == "finished"
    for s in summarize_run(RunScores.from_store(store)):
        assert run.data.metrics[f"{s.metric}/n_scored"] == s.n_scored


def test_a_run_that_did_not_finish_is_not_finished_in_mlflow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = {
        "observability.mlflow_tracking_uri": uri,
        "observability.mlflow_experiment": "budget",
        "budget.max_tokens": 60,
    }
    result = api.run(write_experiment(tmp_path), overrides)
    assert result.status == "budget_exceeded"
    _, (run,) = only_run(uri, "budget")
    assert run.info.status == "FAILED" and run.data.tags["ragdive.status"] == "budget_exceeded"


class StopAfterOne(Observer):
    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the run goes


def test_a_run_interrupted_midway_is_killed_not_left_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = {"observability.mlflow_tracking_uri": uri, "observability.mlflow_experiment": "stopped"}
    with pytest.raises(KeyboardInterrupt):
        api.run(write_experiment(tmp_path), overrides, observer=StopAfterOne())
    client, (run,) = only_run(uri, "stopped")
    assert run.info.status == "KILLED"
    assert run.data.params["simulation.max_turns"] == "2"  # logged when the run was created
    assert "manifest.json" in {a.path for a in client.list_artifacts(run.info.run_id)}  # the end's artifacts too


def test_a_sweep_is_a_parent_mlflow_run_with_a_child_per_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", str(write_sweep(tmp_path, repeats=1, static=False)), "-o", str(out)]) == 0
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["export", str(out), "--format", "mlflow", "--tracking-uri", uri, "--experiment", "sweeps"]
    assert main(args) == 0, capsys.readouterr().err
    _, runs = only_run(uri, "sweeps")
    (parent,) = [r for r in runs if r.data.tags.get("ragdive.kind") == "sweep"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == len(HISTORIES) == len(runs) - 1  # one cell per history setting, one repeat each
    assert {c.data.tags["ragdive.cell"] for c in children} == {c.data.tags["ragdive.cell"] for c in children}
    assert all(c.data.params["target.history"] for c in children)
    assert sorted(c.data.params["target.history"] for c in children) == sorted(str(h) for h in HISTORIES)
