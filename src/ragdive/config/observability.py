from __future__ import annotations

from ._base import Section


class ObservabilityConfig(Section):
    """Where a run is sent live, as it goes (the export after the fact is `ragdive export`)."""

    otlp_endpoint: str | None = None
    """An OpenTelemetry collector's OTLP/HTTP URL (its base or its /v1/traces; extra `otel`): each conversation's
    trace is sent when the conversation is written, each score's span when it is given. `run --otel URL` sets it
    for one run. null: nothing sent."""
    mlflow_tracking_uri: str | None = None
    """An MLflow tracking URI (a server's http(s) URL, sqlite:///file.db, a folder; extra `mlflow`): the run is an
    MLflow run from its start (params), with its progress as steps while it goes and, when it ends, the metrics,
    per-turn curves, tables, manifest and report that `ragdive export --format mlflow` logs, and MLflow's status
    (FINISHED, FAILED, KILLED for an interrupted run). `run --mlflow URI` sets it for one run. null: nothing
    logged."""
    mlflow_experiment: str | None = None
    """The MLflow experiment of a live run (default: MLFLOW_EXPERIMENT_NAME, else "ragdive")."""
