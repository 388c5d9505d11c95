"""The live progress lines fit an 80-column terminal: bar and counts first, every figure of the simulation
(conversations, turns, rejections, tokens, cost) abbreviated rather than cut, the rejections by category only where
there is room, and done/total while scoring."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ragdive.cli.display import AskingProgress, ProgressObserver, ScoringProgress, fit, progress_display
from ragdive.records import FailedCheck, Rejection, Score, Totals

from .factories import make_conversation, make_draft


def render(width: int) -> list[str]:
    """Every stage's line at a realistic size, as a terminal of ``width`` columns shows it."""
    screen = Console(width=width, record=True, file=io.StringIO(), force_terminal=True)
    progress = progress_display(screen)
    simulation = ProgressObserver(progress)
    simulation.started(400, 123, Totals(turns=600, rejections=40, prompt_tokens=1_234_567, cost_usd=12.5))
    for category in (FailedCheck.NOT_STANDALONE, FailedCheck.WRONG_TYPE, FailedCheck.NOT_STANDALONE):
        simulation.rejection(
            Rejection(
                conversation_id="c", turn_index=1, attempt=1, categories=[category], reason="no", draft=make_draft()
            )
        )
    scoring = ScoringProgress(progress)
    scoring.start(2400, 40)
    scoring.score(Score(conversation_id="c", turn_index=0, metric="faithfulness", value=1.0))
    scoring.score(Score.unscored(conversation_id="c", metric="correctness", reason="judge output unusable"))
    AskingProgress(progress, 500).conversation(make_conversation())
    screen.print(progress.get_renderable())
    return screen.export_text().splitlines()


def test_at_80_columns_every_line_fits_with_bar_and_counts_first() -> None:
    lines = render(80)
    assert len(lines) == 3
    assert all(len(line) <= 80 for line in lines), lines
    simulating, scoring, asking = lines
    assert "simulating" in simulating and "123/400" in simulating and "━" in simulating
    # every figure, abbreviated: conversations done/planned, turns, rejections, tokens, cost
    assert simulating.endswith("600 turns, 43 rej, 1.23M tok, $12.5000"), simulating
    assert "not_standalone" not in simulating  # no room for the breakdown
    assert "scoring" in scoring and "  42/2400" in scoring and "unscored 1" in scoring  # done/total
    assert "1/500" in asking and "target errors 0" in asking


def test_a_wide_terminal_shows_the_rejections_by_category() -> None:
    simulating = render(200)[0]
    assert "rejections 43 (not_standalone 2, wrong_type 1) | tokens 1234567 | cost $12.5000" in simulating
    assert len(simulating) <= 200


@pytest.mark.parametrize("width", [40, 60, 80, 100, 120, 200])
def test_no_line_is_wider_than_the_terminal_and_no_figure_is_cut(width: int) -> None:
    lines = render(width)
    assert all(len(line) <= width for line in lines)
    stats = lines[0].split("0:00:00", 1)[1].strip()  # what the simulation line says after its fixed columns
    words = {w.strip(",|()") for w in stats.split()}
    # whatever fits is whole: each figure with its unit, never a number or a word cut short
    assert words <= {
        "turns",
        "600",
        "43",
        "rej",
        "1.23M",
        "tok",
        "$12.5000",
        "rejections",
        "tokens",
        "1234567",
        "cost",
        "not_standalone",
        "2",
        "wrong_type",
        "1",
        "",
    }, stats


def test_fit_takes_the_richest_choice_that_fits() -> None:
    choices = ["a much longer one", "shorter", "s"]
    assert fit(choices, 80) == "a much longer one"
    assert fit(choices, 7) == "shorter"
    assert fit(choices, 0) == "" and fit(choices, 0) == fit(["600 turns"], 3) == ""  # never a figure cut short
    assert fit([], 10) == ""


def test_a_stderr_that_is_not_a_terminal_gets_plain_lines_not_a_live_display() -> None:
    """A CI log or a pipe cannot show rich's redrawn lines (it printed nothing until the end): one plain line per
    task when it starts, when it completes and when the display stops, and at most every PLAIN_EVERY_S between."""
    log = io.StringIO()
    stream = Console(file=log, width=200, force_terminal=False)
    progress = progress_display(stream)
    with progress:
        simulation = ProgressObserver(progress)
        simulation.started(3, 0, Totals())
        for _ in range(3):
            simulation.turn("c", make_conversation().turns[0])  # within PLAIN_EVERY_S: no new line
        for _ in range(3):
            simulation.conversation(make_conversation(), Totals(turns=6))
        scoring = ScoringProgress(progress)
        scoring.start(2, 0)
        scoring.score(Score(conversation_id="c", turn_index=0, metric="faithfulness", value=1.0))
        scoring.score(Score.unscored(conversation_id="c", metric="correctness", reason="judge failed"))
    lines = log.getvalue().splitlines()
    assert "\x1b[" not in log.getvalue()  # no terminal control codes in a log
    assert lines[0].startswith("simulating 0/3 | turns 0")
    assert "simulating 3/3 | turns 3 | rejections 0 | tokens 0 | cost unknown" in lines  # completed: said at once
    assert lines[-1] == "scoring 2/2 | unscored 1"
    assert len(lines) == 4  # start and end of each task; the turns in between were within PLAIN_EVERY_S
