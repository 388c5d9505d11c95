"""A run (or a sweep) as MLflow runs (extra `mlflow`): `ragdive export --format mlflow RUN|SWEEP`.

Per run: the config as params (flattened: ``simulation.max_turns``), per metric its mean, 95 % CI bounds and
counts (``correctness/mean``, ``correctness/ci_low``, ``correctness/ci_high``, ``correctness/n_scored``,
``correctness/n_unscored``: the numbers `ragdive run` prints; a metric with no scored item logs no mean, never 0),
its per-turn curve as steps (``correctness/by_turn`` at step 1, 2, ...), the per-turn table as an MLflow table
(``turns.json``), and the run's tables, manifest and report as artifacts. A sweep is a parent run with one child
run per run of each cell (tagged with the cell and its axes).

The tracking store and experiment are MLflow's own settings: MLFLOW_TRACKING_URI (`--tracking-uri`) and
MLFLOW_EXPERIMENT_NAME (`--experiment`; default ``ragdive``).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..analysis import RunScores, summarize_by, summarize_run
from ..errors import ConfigError
from ..store import RunStore, SweepStore

MAX_PARAM = 6000  # MLflow's limit on a param value's length


def _mlflow() -> Any:
    try:
        import mlflow
    except ImportError as exc:
        raise ConfigError("MLflow export needs mlflow: pip install 'ragdive[mlflow]'") from exc
    return mlflow


def flatten(config: Any, prefix: str = "") -> dict[str, str]:
    """``{"simulation": {"max_turns": 5}}`` -> ``{"simulation.max_turns": "5"}``; lists as JSON."""
    out: dict[str, str] = {}
    if isinstance(config, dict):
        for key, value in config.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out
    text = config if isinstance(config, str) else json.dumps(config, ensure_ascii=False)
    out[prefix.rstrip(".")] = text[:MAX_PARAM]
    return out


def metric_values(run: RunScores) -> tuple[dict[str, float], dict[str, list[tuple[int, float]]]]:
    """The summary's metrics (mean, CI, counts) and each per-turn metric's curve, as MLflow metrics."""
    metrics: dict[str, float] = {}
    for s in summarize_run(run):
        if s.mean is not None:
            metrics[f"{s.metric}/mean"] = s.mean
        if s.ci is not None:
            metrics[f"{s.metric}/ci_low"], metrics[f"{s.metric}/ci_high"] = s.ci
        metrics[f"{s.metric}/n_scored"] = float(s.n_scored)
        metrics[f"{s.metric}/n_unscored"] = float(s.n_unscored)
    curves: dict[str, list[tuple[int, float]]] = {}
    for metric, groups in summarize_by(run, "turn").items():
        curves[metric] = [(int(turn), g.mean) for turn, g in groups.items() if g.mean is not None]
    return metrics, curves


def _log_one(mlflow: Any, store: RunStore, tags: dict[str, str] | None = None) -> str:
    manifest = store.read_manifest()
    with mlflow.start_run(run_name=manifest.name or manifest.run_id, nested=bool(tags)) as active:
        mlflow.set_tags(run_tags(manifest, tags))
        log_params(mlflow, manifest.config or {})
        log_contents(mlflow, store)
        return str(active.info.run_id)


def run_tags(manifest: Any, tags: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "ragdive.run_id": manifest.run_id,
        "ragdive.kind": manifest.kind,
        "ragdive.status": manifest.status,
        **{f"ragdive.model.{role}": model for role, model in manifest.models.items()},
        **(tags or {}),
    }


def log_params(mlflow: Any, config: dict[str, Any]) -> None:
    items = list(flatten(config).items())
    for i in range(0, len(items), 100):  # MLflow takes at most 100 params per batch
        mlflow.log_params(dict(items[i : i + 100]))


def log_contents(mlflow: Any, store: RunStore) -> None:
    """Into the active MLflow run: the run's metrics, per-turn curves, turn table, tables, manifest and report."""
    from .export import export_run, read_run_data

    data = read_run_data(store)
    metrics, curves = metric_values(RunScores.from_store(store))
    if metrics:
        mlflow.log_metrics(metrics)
    for metric, points in curves.items():
        for step, value in points:
            mlflow.log_metric(f"{metric}/by_turn", value, step=step)
    columns, rows = data.tables["turns"]
    if rows:
        mlflow.log_table({c: [r.get(c) for r in rows] for c in columns}, artifact_file="turns.json")
    with tempfile.TemporaryDirectory() as tmp:
        export_run(store, Path(tmp), ["csv"])
        mlflow.log_artifacts(tmp, artifact_path="tables")
    mlflow.log_artifact(str(store.path / "manifest.json"))
    if store.report_path.is_file():
        mlflow.log_artifact(str(store.report_path))


class ClientRun:
    """The fluent calls this module makes (log_params, log_metrics, log_table...), on one run through an explicit
    MlflowClient: a live run must not set MLflow's process-wide tracking URI or active run, which would redirect a
    later export in the same process."""

    def __init__(self, tracking_uri: str, experiment: str, run_name: str, tags: dict[str, str]) -> None:
        from mlflow import MlflowClient

        self.client = MlflowClient(tracking_uri=tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else self.client.create_experiment(experiment)
        self.run_id = str(self.client.create_run(experiment_id, run_name=run_name, tags=tags).info.run_id)

    def log_params(self, params: dict[str, str]) -> None:
        from mlflow.entities import Param

        self.client.log_batch(self.run_id, params=[Param(k, v) for k, v in params.items()])

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        import time

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self.client.log_batch(self.run_id, metrics=[Metric(k, v, now, step or 0) for k, v in metrics.items()])

    def log_metric(self, key: str, value: float, step: int | None = None) -> None:
        self.client.log_metric(self.run_id, key, value, step=step)

    def log_table(self, data: dict[str, list[Any]], artifact_file: str) -> None:
        self.client.log_table(self.run_id, data=data, artifact_file=artifact_file)

    def log_artifacts(self, local_dir: str, artifact_path: str | None = None) -> None:
        self.client.log_artifacts(self.run_id, local_dir, artifact_path)

    def log_artifact(self, local_path: str) -> None:
        self.client.log_artifact(self.run_id, local_path)

    def set_tag(self, key: str, value: str) -> None:
        self.client.set_tag(self.run_id, key, value)

    def end(self, status: str) -> None:
        self.client.set_terminated(self.run_id, status)


def _setup(experiment: str | None) -> Any:
    mlflow = _mlflow()
    mlflow.set_experiment(experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or "ragdive")
    return mlflow


def log_store(store: RunStore, *, experiment: str | None = None) -> str:
    """One run directory as one MLflow run; returns the MLflow run id."""
    return _log_one(_setup(experiment), store)


def log_sweep(sweep: SweepStore, *, experiment: str | None = None) -> str:
    """A sweep as a parent MLflow run and one child per run of its cells; returns the parent's id."""
    mlflow = _setup(experiment)
    index = sweep.read()
    with mlflow.start_run(run_name=index.name) as parent:
        mlflow.set_tags({"ragdive.kind": "sweep", "ragdive.status": index.status, "ragdive.baseline": index.baseline})
        log_params(mlflow, index.config)
        tables = sweep.path / "tables.json"
        if tables.is_file():
            mlflow.log_artifact(str(tables))
        for cell in index.cells:
            for entry in cell.runs:
                path = sweep.run_path(entry.run_id)
                if not (path / "manifest.json").is_file():
                    continue
                tags = {"ragdive.cell": cell.cell, "ragdive.repeat": str(entry.repeat)}
                tags.update({f"ragdive.axis.{k}": json.dumps(v) for k, v in cell.axes.items()})
                _log_one(mlflow, RunStore.open(path), tags)
        return str(parent.info.run_id)


def log_run(data: Any) -> str:
    """The exporter registry's entry: the RunData's store as one MLflow run."""
    return log_store(data.store)
