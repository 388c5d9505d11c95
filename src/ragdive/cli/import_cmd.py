"""`ragdive import FORMAT FILE... -o RUNDIR`: another tool's run as a ragdive run (kind imported)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..api import import_run
from ..errors import ConfigError
from ..interop.imports import IMPORTERS
from ..store import RunStore
from .display import out


def import_cmd(
    source_format: str = typer.Argument(..., metavar="FORMAT", help=f"One of: {', '.join(IMPORTERS.builtin_names())}."),
    files: list[Path] = typer.Argument(
        ..., help="The source files (for ragdive-reference: conversations and evaluations)."
    ),
    output: Path = typer.Option(..., "-o", "--output", help="The run directory to create (must not exist)."),
    name: str | None = typer.Option(None, "--name", help="A human name for the run (compare shows it)."),
    rewrite: bool = typer.Option(
        False, "--rewrite", help="Have the user model write a stand-alone question for each turn after the first."
    ),
    model: list[str] = typer.Option([], "--model", help="With --rewrite: bind the user role, user=provider/model."),
    config: Path | None = typer.Option(None, "--config", help="With --rewrite: experiment YAML (models, cache)."),
) -> None:
    """Read another tool's conversations and scores into a new run directory: unknown values stay unknown
    (question type "unknown", tokens unknown, nan scores unscored), and the manifest lists the files with their
    sha256 and every value that had to be invented."""
    if (model or config) and not rewrite:
        raise ConfigError("--model and --config are for --rewrite (the user model's stand-alone questions)")
    result = import_run(source_format, files, output, name=name, rewrite=rewrite, config=config, models=model)
    store = RunStore.open(result.run_dir)
    m = store.read_manifest()
    t = m.totals
    out.print(
        f"imported {t.conversations} conversations, {t.turns} turns, {t.scores} scores ({t.unscored} unscored) "
        f"into {store.path}",
        markup=False,
        soft_wrap=True,
    )
    assert m.provenance is not None
    for note in m.provenance.notes:
        out.print(f"note: {note}", markup=False, soft_wrap=True)
