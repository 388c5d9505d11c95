"""`ragdive export RUN -o FOLDER [--format csv,parquet,ragas,deepeval]`: a run's turns and scores for other
tools."""

from __future__ import annotations

from pathlib import Path

import typer

from ..interop import FORMATS, export_run
from ..store import RunStore
from .display import out


def export_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    output: Path = typer.Option(..., "-o", "--output", help="Folder that receives the files."),
    formats: str = typer.Option("csv", "--format", help=f"Comma-separated: {', '.join(FORMATS)}."),
) -> None:
    """Write turns.* and conversations.* (one row per turn / conversation, scores beside them, unscored reasons
    in their own columns, human ratings in an annotations column), Ragas single- and multi-turn samples as JSONL,
    or DeepEval LLMTestCase / ConversationalTestCase JSON."""
    store = RunStore.open(run)  # a missing or foreign directory: one line, exit 2
    for path in export_run(store, output, [f.strip() for f in formats.split(",") if f.strip()]):
        out.print(str(path), markup=False, soft_wrap=True)
