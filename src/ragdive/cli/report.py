"""`ragdive report RUN|SWEEP [-o report.html]`: the single-file HTML report of a run or of a sweep (opens offline,
in any browser)."""

from __future__ import annotations

from pathlib import Path

import typer

from .. import api
from ..analysis.conversations import DEFAULT_METHOD
from ..errors import ConfigError
from ..sync_edge import run_loop
from .analyze import print_judge_spend
from .display import out
from .options import (
    ANALYSIS_JUDGE,
    BELOW,
    CACHE_DIR,
    JUDGE_ALIAS,
    NO_CACHE,
    THRESHOLD,
    UNIQUENESS_HELP,
    judge_model,
)
from .themes import parse_below


def report_cmd(
    run: Path = typer.Argument(..., help="Run directory, or sweep directory (one with tables.json)."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Where to write it (default: report.html in RUN or SWEEP)."
    ),
    uniqueness: str = typer.Option(DEFAULT_METHOD, "--uniqueness", help=UNIQUENESS_HELP),
    threshold: float | None = THRESHOLD,
    model: list[str] = ANALYSIS_JUDGE,
    themes: bool = typer.Option(
        False, "--themes", help="Add failure themes (as `ragdive analyze --themes`; --model judge=... labels them)."
    ),
    below: list[str] = BELOW,
    judge: str | None = JUDGE_ALIAS,
    no_cache: bool = NO_CACHE,
    cache_dir: Path | None = CACHE_DIR,
) -> None:
    """Write one self-contained HTML file: setup and cost, metric summaries, per-turn curves, question-type flow,
    uniqueness, rejections, lapses and a conversation browser. For a sweep: its cells with links to their runs'
    reports, and the paper's Tables 2, 4 and 5 from its tables.json and Table 3 from its runs."""
    judge = judge_model(model, judge, "report")
    if below and not themes:
        raise ConfigError("--below is for --themes")
    result = run_loop(
        api.areport(
            run,
            output,
            uniqueness=uniqueness,
            threshold=threshold,
            judge=judge,
            themes=themes,
            below=parse_below(below),
            no_cache=no_cache,
            cache_dir=cache_dir,
        )
    )
    print_judge_spend(result.judge_spend)
    out.print(str(result.path), markup=False, soft_wrap=True)
