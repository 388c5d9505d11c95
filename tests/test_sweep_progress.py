"""`ragdive sweep`'s live line: on a terminal, where the sweep stands (runs done of planned, cells, runs under way,
cost, time left) fitted to the width, abbreviated rather than cut; a stream that is not a terminal gets the plain
standing line after each run instead (tests/pipeline/test_sweep.py)."""

from __future__ import annotations

import io
import time
from collections import Counter

import pytest
from rich.console import Console

from ragdive.cli.sweep_progress import SweepLines


def render(width: int) -> tuple[list[str], list[str], list[str]]:
    """The live line of a 40-run sweep with 17 runs done, as a terminal of ``width`` columns shows it, and the run
    lines printed above it."""
    screen = Console(width=width, record=True, file=io.StringIO(), force_terminal=True)
    lines = SweepLines(screen)
    assert lines.live is not None  # a terminal: the live display
    lines.runs, lines.per_cell = 40, {f"cell-{i}": 4 for i in range(10)}
    lines.ended_in_cell = Counter({"cell-0": 4, "cell-1": 4, "cell-2": 4, "cell-3": 4, "cell-4": 1})
    lines.running = {"c04-r1", "c05-r0"}
    lines.ran, lines.began, lines.cost = 17, time.monotonic() - 17 * 75, 12.34567
    lines.task = lines.live.add_task("sweep", total=40)
    lines.run_ended("c04-r0", "cell-4", "finished", None)  # the 18th run: the line updates
    screen.print(lines.live.get_renderable())
    text = screen.export_text().splitlines()
    return text[:-1], text[-1:], lines.stats()


@pytest.mark.parametrize("width", [80, 200])
def test_the_sweep_s_live_line_fits_and_no_figure_is_cut(width: int) -> None:
    above, (live,), choices = render(width)
    assert all(len(line) <= width for line in [*above, live])
    assert above == ["c04-r0 [cell-4] finished"]  # a run's line above the live one, not inside it
    assert "sweep" in live and "18/40" in live  # the bar's runs done of planned
    stats = live.split("0:00:00", 1)[1].strip()
    shown = [w.strip(",|") for w in stats.split()]
    whole = {w.strip(",|") for choice in choices for w in choice.split()}
    assert shown and set(shown) <= whole, stats  # every word shown is a whole word of a choice: nothing cut
    assert stats in choices  # one of the choices, entire
    assert "4/10" in stats and "unknown" in stats  # the cells done; a cost not known is said, never $0
    if width >= 120:
        assert "cells 4/10 done" in stats and "2 running" in stats and "left" in stats


def test_a_stream_that_is_not_a_terminal_gets_no_live_display() -> None:
    assert SweepLines(Console(file=io.StringIO(), force_terminal=False)).live is None
