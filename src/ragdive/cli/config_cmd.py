"""`ragdive config check FILE`: validate a config and show it resolved, secrets masked."""

from __future__ import annotations

from pathlib import Path

import typer
import yaml

from ..config import ExperimentConfig, load_config
from ..redaction import redact
from .display import out

app = typer.Typer(help="Work with experiment config files.", no_args_is_help=True)


@app.command("check")
def check_cmd(file: Path = typer.Argument(..., help="Experiment YAML file.")) -> None:
    """Validate FILE and print the resolved config (defaults filled in, ${ENV} resolved, secrets masked)."""
    config: ExperimentConfig = load_config(file)
    resolved = redact(config.model_dump(mode="json", exclude_none=True))
    out.print(f"# {file}: valid", markup=False)
    out.print(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True).rstrip(), markup=False)
