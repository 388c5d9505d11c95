"""What `evaluate` and `static` share: building the judge from config and --model, and the summary table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from ..config import ExperimentConfig, load_config, validate_config
from ..errors import ConfigError
from ..evaluation import Judge
from ..evaluation.stats import MetricSummary, RunScores, summarize_by, summarize_run
from ..models import ModelContext, apply_model_overrides, models_for_roles
from ..redaction import MASK

# a pipe gets 160 columns, not rich's 80, so tables are not truncated in logs and tests
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def _strip_masked(value: Any) -> Any:
    """A manifest's config has its secrets masked; a masked key must not be sent to a provider as if real."""
    if isinstance(value, dict):
        return {k: _strip_masked(v) for k, v in value.items() if v != MASK}
    return value


def settings_for(config_file: Path | None, manifest_config: dict[str, Any] | None) -> ExperimentConfig:
    """Models, evaluation, cache and budget settings: from --config when given, else the non-secret part of the
    run's manifest (each section that does not validate falls back to its defaults)."""
    if config_file is not None:
        return load_config(config_file)
    data = _strip_masked(manifest_config or {})
    sections: dict[str, Any] = {}
    for name in ("models", "evaluation", "cache", "budget"):
        try:
            validate_config({name: data.get(name) or {}}, ExperimentConfig, source="run manifest")
        except ConfigError:
            continue
        sections[name] = data.get(name) or {}
    return validate_config(sections, ExperimentConfig, source="run manifest")


def build_judge(config: ExperimentConfig, overrides: list[str], concurrency: int) -> Judge:
    """The judge with the run's shared model context: the cache and the budget of ``config``."""
    models = apply_model_overrides(config.models, overrides)
    if models.for_role("judge") is None:
        raise ConfigError("no judge model: pass --model judge=provider/model or --config with models.judge")
    model = models_for_roles(models, ["judge"], context=ModelContext.from_config(config))["judge"]
    return Judge(model, concurrency=concurrency)


def parse_metrics(option: str | None, default: list[str]) -> list[str]:
    if not option:
        return list(default)
    names = [m.strip() for m in option.split(",") if m.strip()]
    if not names:
        raise ConfigError("--metrics: name at least one metric")
    return names


GROUPINGS = ("turn", "question_type", "persona")


def _summary_table(title: str, first: str) -> Table:
    table = Table(title=title, box=box.SIMPLE, pad_edge=False, title_justify="left")
    for name, justify in ((first, "left"), ("mean", "right"), ("95% CI", "right"), ("scored", "right")):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("unscored", justify="right", no_wrap=True)
    table.add_column("most common unscored reason", overflow="fold")
    return table


def _row(label: str, s: MetricSummary) -> list[str]:
    ci = f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]" if s.ci else "-"
    top = s.unscored_reasons.most_common(1)
    reason = f"{top[0][0]} ({top[0][1]})" if top else ""
    mean = f"{s.mean:.3f}" if s.mean is not None else "-"
    return [label, mean, ci, str(s.n_scored), str(s.n_unscored), reason]


def print_summary(run: RunScores, metrics: list[str] | None = None) -> None:
    """Per metric: mean of scored items, clustered 95 % CI, scored and unscored counts."""
    table = _summary_table(f"{run.name}: per-metric summary (unscored items are not in the mean)", "metric")
    for s in summarize_run(run, metrics):
        table.add_row(*_row(s.metric, s))
    console.print(table)


def print_grouped(run: RunScores, by: str, metrics: list[str] | None = None) -> None:
    for metric, groups in summarize_by(run, by, metrics).items():
        table = _summary_table(f"{metric} by {by.replace('_', ' ')}", by)
        for group, s in groups.items():
            table.add_row(*_row(group, s))
        console.print(table)
