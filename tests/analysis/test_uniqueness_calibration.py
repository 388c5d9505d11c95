"""Calibrating the same-question threshold on duplicate labels: made-up labels whose agreement is known by hand, the
`ragdive analyze --calibrate-uniqueness` command on them, and (when the shared data is on the machine) the figures
the README states for the paper's labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragdive.analysis.conversations import (
    OVERLAP_THRESHOLD,
    LabelledQuestion,
    TokenOverlap,
    calibrate,
    content_words,
    read_labels,
)
from ragdive.cli.main import main
from ragdive.errors import ConfigError

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "rag-dive-uniqueness" / "calibration.jsonl"

# one document, two turns, three runs each. Turn 1: runs 0 and 1 ask the same (people said so), run 2 another thing.
# Turn 2: all different; run 2 names run 0 but run 0 does not name it back (a rater's slip, kept as given).
ROWS = [
    ("harbour", 1, 0, "When was the Veldmark lighthouse built?", [1]),
    ("harbour", 1, 1, "When was the lighthouse at Veldmark built?", [0]),
    ("harbour", 1, 2, "Who designed the Veldmark harbour breakwater?", []),
    ("harbour", 2, 0, "How tall is the Veldmark lighthouse tower?", []),
    ("harbour", 2, 1, "Which river flows into Veldmark harbour?", []),
    ("harbour", 2, 2, "How many ships used the harbour in 1910?", [0]),
]


def labels() -> list[LabelledQuestion]:
    return [LabelledQuestion(d, t, r, text, tuple(same)) for d, t, r, text, same in ROWS]


def test_token_overlap_is_the_cosine_of_content_word_sets() -> None:
    a, b = "When was the Veldmark lighthouse built?", "When was the lighthouse at Veldmark built?"
    assert content_words(a) == {"veldmark", "lighthouse", "built"}
    vectors = TokenOverlap()([a, b, "Who designed the breakwater?"])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert unit[0] @ unit[1] == pytest.approx(1.0)  # the same three content words
    assert unit[0] @ unit[2] == pytest.approx(0.0)


def test_calibration_agrees_with_hand_counted_pairs_and_shares() -> None:
    result = calibrate(labels(), TokenOverlap(), method="overlap", thresholds=(0.2, 0.5, 0.9))
    assert (result.questions, result.pairs, result.same_pairs) == (6, 6, 2)  # turn 2's (0, 2) counts: named once
    # the people's shares, counted as the paper does (unique = its own cell is empty): turn 1 1/3, turn 2 2/3
    assert result.human_shares == {1: pytest.approx(1 / 3), 2: pytest.approx(2 / 3)}
    # at 0.5 only turn 1's (0, 1) pair is the same (cosine 1.0; every other pair shares at most one of ~3 words)
    at = result.at[0.5]
    assert at.agreement == pytest.approx(5 / 6) and at.shares == {1: pytest.approx(1 / 3), 2: 1.0}
    # kappa by hand: predicted 1/6 same, people 2/6; p_o = 5/6, p_e = 1/6*2/6 + 5/6*4/6 = 22/36
    assert at.kappa == pytest.approx((5 / 6 - 22 / 36) / (1 - 22 / 36))
    assert at.largest_share_gap == pytest.approx(1 / 3)
    assert result.best.threshold == 0.5


def write_labels(tmp_path: Path, kind: str) -> Path:
    if kind == "jsonl":
        path = tmp_path / "labels.jsonl"
        rows = [{"document": d, "turn": t, "run": r, "text": x, "same_as_runs": s} for d, t, r, x, s in ROWS]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        path = tmp_path / "labels.csv"
        lines = ["document,turn,run,text,same_as_runs"]
        lines += [f'{d},{t},{r},"{x}","{",".join(map(str, s))}"' for d, t, r, x, s in ROWS]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_labels_read_from_csv_and_jsonl_alike(tmp_path: Path, kind: str) -> None:
    assert read_labels(write_labels(tmp_path, kind)) == labels()


def test_analyze_calibrate_uniqueness_prints_the_best_threshold_and_its_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_labels(tmp_path, "csv")
    assert main(["analyze", "--calibrate-uniqueness", str(path), "--uniqueness", "overlap", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "overlap" and (data["pairs"], data["same_pairs"]) == (6, 2)
    best = data["best"]
    # every threshold between the same pair's 1.0 and the next pair's overlap decides alike; the middle one is chosen
    assert best["agreement"] == pytest.approx(5 / 6) and 0.34 < best["threshold"] < 1.0
    assert {row["threshold"] for row in data["at"]} >= {0.05, 0.5, 0.95}
    assert main(["analyze", "--calibrate-uniqueness", str(path), "--uniqueness", "overlap"]) == 0
    printed = capsys.readouterr().out
    assert f"best threshold {best['threshold']:g}: kappa {best['kappa']:.3f}" in printed
    assert "pairs decided as labelled 83.3%" in printed


def test_calibrate_uniqueness_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--calibrate-uniqueness", str(tmp_path / "missing.csv")]) == 2
    assert "cannot read the labels" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("document,turn,text\nd,1,Who?\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="row 1 has no run"):
        read_labels(bad)
    assert main(["analyze", "--calibrate-uniqueness", str(bad), "--uniqueness", "exact"]) == 2
    assert main(["analyze"]) == 2  # neither runs nor labels


@pytest.mark.skipif(not SHARED.is_file(), reason=f"the paper's uniqueness labels are not at {SHARED}")
def test_the_readme_figures_for_word_overlap_on_the_papers_calibration_half() -> None:
    result = calibrate(read_labels(SHARED), TokenOverlap(), method="overlap")
    assert (result.pairs, result.same_pairs) == (1000, 113)
    assert result.human_shares == pytest.approx({1: 0.39, 2: 0.76, 3: 0.90, 4: 0.98, 5: 1.0})
    assert result.best.threshold == OVERLAP_THRESHOLD
    assert result.best.kappa == pytest.approx(0.822, abs=5e-4)
    assert result.best.shares == pytest.approx({1: 0.42, 2: 0.83, 3: 0.91, 4: 0.97, 5: 1.0})
