"""`ragdive export RUN -o FOLDER [--format csv,parquet,ragas,deepeval]`: a run's turns and scores for other tools;
`--format otlp` sends it as OpenTelemetry traces, `--format mlflow` logs it (or a whole sweep) to MLflow."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ..interop import FORMATS
from .display import out


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
    result = api.export(
        run,
        output,
        formats.split(","),
        endpoint=endpoint,
        tracking_uri=tracking_uri,
        experiment=experiment,
        raw_csv=raw_csv,
    )
    if result.sweep_run_id is not None:
        out.print(f"mlflow: sweep logged as run {result.sweep_run_id}", markup=False)
        return
    for path in result.files:
        out.print(str(path), markup=False, soft_wrap=True)
    for name in result.sent:
        out.print(f"{name}: sent {run.name}", markup=False)
