"""`ragdive config check FILE [--probe]`: validate a config, check what can be checked without calling anything,
optionally call each model and the target once, and show the config resolved, secrets masked."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import typer
import yaml

from ..api.serving import ProbeResult, offline_check, probe
from ..config import ExperimentConfig, load_config
from ..errors import ConfigError
from ..redaction import redact, redact_urls
from ..sync_edge import run_loop
from .display import console, out

app = typer.Typer(help="Work with experiment config files.", no_args_is_help=True)


async def _probe(config: ExperimentConfig) -> list[ProbeResult]:
    async with AsyncExitStack() as resources:
        return await probe(config, resources)


@app.command("check")
def check_cmd(
    file: Path = typer.Argument(..., help="Experiment YAML file."),
    probe_: bool = typer.Option(False, "--probe", help="Also call each model and the target once."),
) -> None:
    """Validate FILE: fields, then paths, roles and API keys (nothing is called); with --probe, one call to each
    model and to the target. Says which commands the config is complete for (a part left out, such as the judge,
    is a note naming the commands that need it) and prints the resolved config (defaults filled in, ${ENV}
    resolved, secrets masked). Exits 2 when something is wrong: a path, a key, a failed probe."""
    config: ExperimentConfig = load_config(file)
    found = offline_check(config)
    problems = found.problems
    for problem in problems:
        console.print(f"problem: {redact_urls(problem)}", markup=False, soft_wrap=True)
    for line in found.missing_lines():
        console.print(f"note: {line}", markup=False, soft_wrap=True)
    failed = 0
    if probe_:
        for result in run_loop(_probe(config)):
            console.print(f"probe {redact_urls(result.line())}", markup=False, soft_wrap=True)
            failed += not result.ok
    if problems or failed:
        counts = [f"{len(problems)} problem(s)"] if problems else []
        counts += [f"{failed} failed probe(s)"] if failed else []
        raise ConfigError(f"{file}: {' and '.join(counts)} (listed above)")
    resolved = redact(config.model_dump(mode="json", exclude_none=True))
    checked = "fields, paths, roles and keys checked" + ("; every model and the target answered" if probe_ else "")
    ready = ", ".join(found.complete_for) or "no command (see the notes)"
    out.print(f"# {file}: valid ({checked}); complete for: {ready}", markup=False, soft_wrap=True)  # one line
    out.print(yaml.safe_dump(resolved, sort_keys=False, allow_unicode=True).rstrip(), markup=False)


@app.command("schema")
def schema_cmd(sweep: bool = typer.Option(False, "--sweep", help="The schema of sweep files instead.")) -> None:
    """Print the JSON schema of experiment files (with --sweep: of sweep files), field docs as descriptions, for
    an editor: save it and put `# yaml-language-server: $schema=<file>` on the YAML's first line."""
    import json

    from ..config.schema import experiment_schema, sweep_schema

    out.print(json.dumps(sweep_schema() if sweep else experiment_schema(), indent=2), markup=False, soft_wrap=True)


@app.command("output-schema")
def output_schema_cmd(
    command: str = typer.Argument(..., help="run, evaluate, compare, gate, sweep, runs-list or runs-show."),
) -> None:
    """Print the JSON Schema of what COMMAND --json prints (versioned: its `schema_name` and `version` fields)."""
    import json

    from ..records.outputs import OUTPUTS

    if command not in OUTPUTS:
        raise ConfigError(f"no --json output for {command!r}: one of {', '.join(OUTPUTS)}")
    print(json.dumps(OUTPUTS[command].model_json_schema(), indent=2))
