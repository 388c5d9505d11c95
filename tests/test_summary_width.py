"""The per-metric summary at 80 and 200 columns: every line fits, the figures are there, and the unscored kinds are
whole words (under the table when it is narrow, in their own column when there is room), never folded mid-word."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

import ragdive.cli.display as display
from ragdive.analysis import RunScores
from ragdive.records import Score

from .report_runs import write_scripted_run

KINDS = ("nothing_to_measure 1", "judge_unusable 1", "no_answer 1")


def summary_at(width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    store = write_scripted_run(tmp_path, conversations=4, turns=3)
    first, second, third = store.current_conversations()[:3]
    store.append_scores(
        [
            Score.unscored(conversation_id=c.id, turn_index=1, metric="faithfulness", reason=why, kind=kind)
            for c, kind, why in (
                (first, "nothing_to_measure", "nothing to measure: the answer makes no claim"),
                (second, "judge_unusable", "judge output unusable"),
                (third, "no_answer", "no answer: the target failed"),
            )
        ]
    )
    screen = Console(width=width, record=True, file=io.StringIO())
    monkeypatch.setattr(display, "out", screen)
    run = RunScores.from_store(store)
    display.print_summary(run)
    display.print_grouped(run, "persona")
    return screen.export_text().splitlines()


@pytest.mark.parametrize("width", [80, 200])
def test_the_summary_fits_and_keeps_kinds_whole(width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = summary_at(width, tmp_path, monkeypatch)
    assert all(len(line) <= width for line in lines), lines
    text = "\n".join(lines)
    for figure in ("correctness", "0.825 (n=10)", "[0.780, 0.870]", "faithfulness", "- (n=0)", "forgetfulness"):
        assert figure in text, figure
    faithfulness = next(line for line in lines if "faithfulness" in line and "3" in line and "unscored" not in line)
    for kind in KINDS:  # each kind and its count on one line, never cut
        assert any(kind in line for line in lines), (kind, text)
    if width == 80:
        assert "unscored faithfulness: nothing_to_measure 1, judge_unusable 1, no_answer 1" in lines
        assert "judge_failed" not in faithfulness
    else:
        assert faithfulness.rstrip().endswith("nothing_to_measure 1, judge_unusable 1, no_answer 1")
