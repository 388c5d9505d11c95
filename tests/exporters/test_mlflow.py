"""`ragdive export --format mlflow`: a scored run logged to a real local tracking store (sqlite), read back with
MlflowClient: params, metrics (the numbers the summary prints), per-turn steps, the table and the artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mlflow", reason="the mlflow extra is not installed")

from ragdive.analysis import RunScores, summarize_by, summarize_run  # noqa: E402
from ragdive.cli.main import main  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from tests.pipeline.helpers import write_experiment  # noqa: E402


def test_a_run_read_back_from_a_sqlite_tracking_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    monkeypatch.chdir(tmp_path)  # MLflow's default artifact root is relative to the working directory
    config = write_experiment(tmp_path)
    assert main(["run", str(config)]) == 0
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["export", str(store.path), "--format", "mlflow", "--tracking-uri", uri, "--experiment", "rag-eval"]
    assert main(args) == 0, capsys.readouterr().err

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("rag-eval")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.data.tags["ragdive.run_id"] == store.read_manifest().run_id
    assert run.data.params["simulation.max_turns"] == "2" and run.data.params["seed"] == "5"

    scores = RunScores.from_store(store)
    for s in summarize_run(scores):
        assert run.data.metrics[f"{s.metric}/n_scored"] == s.n_scored
        if s.mean is None:
            assert f"{s.metric}/mean" not in run.data.metrics  # unknown is not 0
        else:
            assert run.data.metrics[f"{s.metric}/mean"] == pytest.approx(s.mean)
            assert run.data.metrics[f"{s.metric}/ci_low"] == pytest.approx(s.ci[0])  # type: ignore[index]
    curve = summarize_by(scores, "turn")["correctness"]
    history = client.get_metric_history(run.info.run_id, "correctness/by_turn")
    assert sorted((h.step, h.value) for h in history) == [(int(t), pytest.approx(g.mean)) for t, g in curve.items()]

    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"turns.json", "manifest.json", "report.html", "tables"} <= artifacts
    table = json.loads(Path(client.download_artifacts(run.info.run_id, "turns.json", str(tmp_path))).read_text())
    assert len(table["data"]) == sum(len(c.turns) for c in scores.conversations)
    tables = {a.path for a in client.list_artifacts(run.info.run_id, "tables")}
    assert tables == {"tables/turns.csv", "tables/conversations.csv"}
