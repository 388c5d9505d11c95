"""Agreement statistics and the PPI estimator, against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest

from ragdive.analysis import cohen_kappa, ppi_mean
from ragdive.analysis.human import agreement
from ragdive.records import Annotation


def ratings(criterion: str, table: dict[str, list[bool]]) -> list[Annotation]:
    return [
        Annotation(run_id="r", conversation_id=f"c{i}", turn_index=0, rater=rater, criterion=criterion, value=v)
        for rater, values in table.items()
        for i, v in enumerate(values)
    ]


def test_cohen_kappa_of_a_textbook_table() -> None:
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4
    first = [True] * 25 + [False] * 25
    second = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)
    assert cohen_kappa([True, True], [True, True]) is None  # undefined, not 1


def test_three_raters_get_krippendorffs_alpha_by_hand() -> None:
    pytest.importorskip("krippendorff", reason="the krippendorff package is not installed")
    # 3 items x 3 raters: (y,y,y), (y,y,n), (n,n,n). Pairable values: 5 yes, 4 no, n = 9.
    # Observed: item 2's ordered yes-no pairs, 2 + 2, each weighted 1/(m-1) = 1/2 -> 2 of 9 -> Do = 2/9.
    # Expected: 2*5*4 / (9*8) = 5/9. alpha = 1 - Do/De = 1 - (2/9)/(5/9) = 3/5.
    result = agreement(
        "plausible",
        ratings("plausible", {"a": [True, True, False], "b": [True, True, False], "c": [True, False, False]}),
    )
    assert result.raters == 3 and result.kappa is None
    assert result.alpha == pytest.approx(3 / 5)
    assert result.raw == pytest.approx(2 / 3)


def test_ppi_adds_the_mean_rectifier_and_both_variances() -> None:
    unlabelled = [1.0, 1.0, 0.0, 1.0]
    judge, human = [1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]
    e = ppi_mean(unlabelled, judge, human)
    assert e is not None
    rect = [0.0, -1.0, 0.0, -1.0]
    var_f = sum((v - 0.75) ** 2 for v in unlabelled) / 3
    var_r = sum((v + 0.5) ** 2 for v in rect) / 3
    assert e.mean == pytest.approx(0.25)
    assert e.high - e.mean == pytest.approx(1.959963984540054 * math.sqrt(var_f / 4 + var_r / 4))
    assert ppi_mean([], [], []) is None


def test_the_judge_side_of_ppi_is_the_frame_the_sample_was_drawn_from() -> None:
    from ragdive.analysis import calibrate
    from ragdive.records import Score

    labels = [
        Annotation(run_id="r", conversation_id="c0", turn_index=i, rater="a", criterion="answer_correct", value=v)
        for i, v in enumerate([True, False])
    ]
    scores = [Score(conversation_id="c0", turn_index=i, metric="correctness", value=1.0) for i in range(4)]
    (everything,) = calibrate(labels, scores)
    (framed,) = calibrate(labels, scores, frame={("c0", 0), ("c0", 1), ("c0", 2)})  # turn 3 was overruled
    assert everything.judged == 4 and framed.judged == 3
    assert framed.ppi is not None and framed.ppi.mean == pytest.approx(1.0 - 0.5)
    assert [(d.turn_index, d.judge, d.humans) for d in framed.disagreements] == [(1, 1.0, 0.0)]
