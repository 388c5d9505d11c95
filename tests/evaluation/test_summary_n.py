"""The summary table shows n beside every mean and says plainly when n is too small to mean anything."""

from __future__ import annotations

import pytest

from ragdive.analysis import RunScores
from ragdive.cli import display as _judging
from ragdive.records import Score
from tests.factories import make_conversation


def run_with(n: int) -> RunScores:
    conversations = [make_conversation(f"c{i}", turns=1, index=i) for i in range(n)]
    scores = [Score(conversation_id=c.id, turn_index=0, metric="correctness", value=1.0) for c in conversations]
    scores.append(Score.unscored(conversation_id="c0", turn_index=0, metric="faithfulness", reason="no contexts"))
    return RunScores(name="r", conversations=conversations, scores=scores)


def test_a_mean_over_a_handful_of_items_shows_its_n_and_a_plain_warning(capsys: pytest.CaptureFixture[str]) -> None:
    _judging.print_summary(run_with(2))
    out = capsys.readouterr().out
    assert "1.000 (n=2) *" in out
    assert "- (n=0)" in out  # a metric with nothing scored says so too
    assert f"fewer than {_judging.SMALL_N} scored items: too few for the mean or its CI to mean anything" in out


def test_enough_items_show_n_without_the_warning(capsys: pytest.CaptureFixture[str]) -> None:
    _judging.print_summary(run_with(_judging.SMALL_N), ["correctness"])
    out = capsys.readouterr().out
    assert f"1.000 (n={_judging.SMALL_N})" in out and "*" not in out and "too few" not in out


def test_grouped_tables_warn_too(capsys: pytest.CaptureFixture[str]) -> None:
    _judging.print_grouped(run_with(3), "persona", ["correctness"])
    out = capsys.readouterr().out
    assert "(n=3) *" in out and "too few" in out
