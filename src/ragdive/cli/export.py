"""`ragdive export RUN -o FOLDER [--format csv,parquet,ragas,deepeval]`: a run's turns and scores for other tools;
`--format otlp` sends it as OpenTelemetry traces, `--format mlflow` logs it (or a whole sweep) to MLflow."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from ..errors import ConfigError
from ..interop import FORMATS, export_run
from ..store import RunStore, SweepStore
from .display import out

SENT = ("otlp", "mlflow")  # formats that send to a service instead of writing files


def export_cmd(
    run: Path = typer.Argument(..., help="Run directory (a sweep directory with --format mlflow)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Folder that receives the files."),
    formats: str = typer.Option("csv", "--format", help=f"Comma-separated: {', '.join(FORMATS)}."),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="otlp: the collector's OTLP/HTTP URL (default: OTEL_EXPORTER_OTLP_ENDPOINT)."
    ),
    tracking_uri: str | None = typer.Option(
        None, "--tracking-uri", help="mlflow: the tracking store (default: MLFLOW_TRACKING_URI)."
    ),
    experiment: str | None = typer.Option(None, "--experiment", help="mlflow: the experiment (default: ragdive)."),
    raw_csv: bool = typer.Option(
        False,
        "--raw-csv",
        help="Write CSV cells as they are. By default a cell starting with = + - @, tab or CR gets a leading ' "
        "(OWASP: a spreadsheet shows it as text instead of running it as a formula).",
    ),
) -> None:
    """Write turns.* and conversations.* (one row per turn / conversation, scores beside them, unscored reasons
    in their own columns, human ratings in an annotations column), Ragas single- and multi-turn samples as JSONL,
    or DeepEval LLMTestCase / ConversationalTestCase JSON. otlp: one OpenTelemetry trace per conversation (GenAI
    conventions, scores as gen_ai.evaluation.result events); mlflow: params, metrics, tables, report."""
    wanted = [f.strip() for f in formats.split(",") if f.strip()]
    # the libraries' own settings: what the flags say wins over the environment, for this command only
    settings: dict[str, str | None] = {}
    if endpoint:  # a traces-only endpoint in the environment would win over it: unset for this command
        settings.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=None)
    if tracking_uri:
        settings["MLFLOW_TRACKING_URI"] = tracking_uri
    if experiment:
        settings["MLFLOW_EXPERIMENT_NAME"] = experiment
    with _environment(settings):
        _export(run, output, wanted, csv_formulas_as_text=not raw_csv)


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


def _export(run: Path, output: Path | None, wanted: list[str], *, csv_formulas_as_text: bool = True) -> None:
    if SweepStore.exists(run):
        if wanted != ["mlflow"]:
            raise ConfigError(f"{run} is a sweep: export a sweep with --format mlflow, or export one of its runs")
        from ..interop.mlflow_export import log_sweep

        out.print(f"mlflow: sweep logged as run {log_sweep(SweepStore.open(run))}", markup=False)
        return
    store = RunStore.open(run)  # a missing or foreign directory: one line, exit 2
    files = [f for f in wanted if f not in SENT]
    if files and output is None:
        raise ConfigError(f"--format {','.join(files)} writes files: name the folder with -o/--output")
    for path in export_run(store, output or Path("."), wanted, csv_formulas_as_text=csv_formulas_as_text):
        out.print(str(path), markup=False, soft_wrap=True)
    for name in (f for f in wanted if f in SENT):
        out.print(f"{name}: sent {store.path.name}", markup=False)
