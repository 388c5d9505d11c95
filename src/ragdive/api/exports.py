"""`export`: a run's turns and scores for other tools (files), or sent to a tracing or tracking service (OTLP,
MLflow; a whole sweep to MLflow)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError

SENT = ("otlp", "mlflow")
"""Formats that send the run to a service instead of writing files."""


@dataclass
class ExportResult:
    files: list[Path] = field(default_factory=list)
    """The files written (csv, parquet, ragas, deepeval ...)."""
    sent: list[str] = field(default_factory=list)
    """The formats that sent the run to a service (otlp, mlflow)."""
    sweep_run_id: str | None = None
    """For a sweep sent to MLflow: its parent run's id."""


def export(
    run: str | Path,
    output: str | Path | None = None,
    formats: Iterable[str] = ("csv",),
    *,
    endpoint: str | None = None,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    raw_csv: bool = False,
) -> ExportResult:
    """Write the run in each of ``formats`` under ``output`` (a folder), or send it: ``otlp`` to ``endpoint`` (an
    OTLP/HTTP collector; default OTEL_EXPORTER_OTLP_ENDPOINT), ``mlflow`` to ``tracking_uri`` / ``experiment``
    (default MLFLOW_TRACKING_URI / ragdive). A sweep directory goes to MLflow as a parent run with a child per run.
    ``raw_csv``: CSV cells as they are (by default a cell a spreadsheet would run as a formula is kept as text)."""
    wanted = [f.strip() for f in formats if f.strip()]
    # the libraries' own settings: what the arguments say wins over the environment, for this call only
    settings: dict[str, str | None] = {}
    if endpoint:  # a traces-only endpoint in the environment would win over it: unset for this call
        settings.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=None)
    if tracking_uri:
        settings["MLFLOW_TRACKING_URI"] = tracking_uri
    if experiment:
        settings["MLFLOW_EXPERIMENT_NAME"] = experiment
    with _environment(settings):
        return _export(Path(run), None if output is None else Path(output), wanted, raw_csv=raw_csv)


def _export(run: Path, output: Path | None, wanted: list[str], *, raw_csv: bool) -> ExportResult:
    from ..interop import export_run
    from ..store import RunStore, SweepStore

    if SweepStore.exists(run):
        if wanted != ["mlflow"]:
            raise ConfigError(f"{run} is a sweep: export a sweep with --format mlflow, or export one of its runs")
        from ..interop.mlflow_export import log_sweep

        return ExportResult(sent=["mlflow"], sweep_run_id=log_sweep(SweepStore.open(run)))
    store = RunStore.open(run)  # a missing or foreign directory: one line, exit 2
    files = [f for f in wanted if f not in SENT]
    if files and output is None:
        raise ConfigError(f"--format {','.join(files)} writes files: name the folder with -o/--output")
    written = export_run(store, output or Path("."), wanted, csv_formulas_as_text=not raw_csv)
    return ExportResult(files=written, sent=[f for f in wanted if f in SENT])


@contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
