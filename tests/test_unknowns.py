"""Unknown is a value: an imported run whose source kept no validator history, no attribution and no per-turn
ground truth shows "unknown" (null in JSON and exports) in every command, never 0 or False; ground-truth metrics
of such turns are unscored with kind no_ground_truth; unscored items are grouped by their kind everywhere."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.interop.export import export_run
from ragdive.interop.imports import import_run
from ragdive.records import UNSCORED_KINDS, Score, kind_of_unscored
from ragdive.store import RunStore

from .test_import import files
from .test_interop_samples import scored_run


@pytest.fixture
def reference_run(tmp_path: Path) -> Path:
    out = tmp_path / "runs" / "ref"
    assert main(["import", "ragdive-reference", *map(str, files("baseline")), "-o", str(out)]) == 0
    return out


def test_every_command_and_export_says_unknown(reference_run: Path, tmp_path: Path, capsys) -> None:
    run = str(reference_run)
    manifest = json.loads((reference_run / "manifest.json").read_text())
    assert manifest["totals"]["rejections"] is None  # in the manifest itself, not only in one display

    capsys.readouterr()
    assert main(["runs", "list", str(reference_run.parent)]) == 0
    listed = capsys.readouterr().out
    row = next(line for line in listed.splitlines() if "ref" in line and "imported" in line)
    assert row.split()[-2] == "unknown"  # the rejected column (before scores), not 0

    assert main(["runs", "show", run]) == 0
    assert re.search(r"unknown rejections", capsys.readouterr().out)

    assert main(["analyze", run, "--uniqueness", "exact"]) == 0
    analysed = capsys.readouterr().out
    assert "validator rejections (unknown" in analysed and "validator rejections (0)" not in analysed
    lapses = analysed.split("lapses (where information was lost)")[1].split("\n\n")[0]
    assert "forgetfulness" in lapses and "unknown" in lapses  # the source has verdicts but no attribution

    assert main(["analyze", run, "--uniqueness", "exact", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = json.dumps(data)
    assert '"total": null' in text and '"with_lapse": null' in text and '"with_lapse": 0' not in text

    assert main(["report", run]) == 0
    html = (reference_run / "report.html").read_text(encoding="utf-8")
    assert "Validator rejections (unknown" in html and "<th>rejections</th><td>unknown</td>" in html
    assert "Validator rejections (0)" not in html

    export_run(RunStore.open(reference_run), tmp_path / "out", ["csv"])
    with (tmp_path / "out" / "turns.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["attempts"] == "" and r["validator_overruled"] == "" for r in rows)  # null, never 0/False
    assert all(r["unanswerable"] == "" for r in rows)
    nan = [r for r in rows if r["unscored_faithfulness"]]
    assert nan and all(r["unscored_kind_faithfulness"] == "source_missing" for r in nan)


def test_an_empty_ground_truth_is_unscored_with_kind_no_ground_truth(tmp_path: Path, capsys) -> None:
    """A DeepEval conversation file has no per-turn reference: correctness and context recall cannot be judged
    against nothing (they scored 1.0, "2 of 2 ground-truth statements found")."""
    store = scored_run(tmp_path / "runs")
    export_run(store, tmp_path / "out", ["deepeval"])
    back = import_run("deepeval", [tmp_path / "out" / "deepeval_conversations.json"], tmp_path / "runs" / "back")
    assert all(t.ground_truth == "" for c in back.current_conversations() for t in c.turns)
    capsys.readouterr()
    metrics = "correctness,context_recall,context_precision"
    assert main(["evaluate", str(back.path), "--model", "judge=scripted/judge", "--metrics", metrics]) == 0
    scores = [s for s in RunStore.open(back.path).current_scores() if s.metric in metrics.split(",")]
    assert scores and all(not s.scored for s in scores)
    assert {s.unscored_kind for s in scores} == {"no_ground_truth"}
    assert "no_ground_truth" in capsys.readouterr().out  # the summary groups by the kind


def test_unscored_reasons_group_by_kind_and_old_lines_are_classified() -> None:
    failures = [
        Score.unscored(conversation_id=f"c{i}", metric="m", reason=f"judge output unusable (x{i}); raw: 'y{i}'")
        for i in range(35)
    ]
    probes = [Score.unscored(conversation_id=f"p{i}", metric="m", reason="unanswerable probe: ...") for i in range(5)]
    from ragdive.analysis.summary import summarize_scores

    summary = summarize_scores("m", failures + probes)
    assert summary.unscored_reasons.most_common() == [("judge_unusable", 35), ("unanswerable_probe", 5)]
    old = Score.model_validate({"conversation_id": "c", "metric": "m", "unscored_reason": "judge call failed: 401"})
    assert old.unscored_kind is None and kind_of_unscored(old) == "judge_failed"
    assert kind_of_unscored(Score(conversation_id="c", metric="m", value=1.0)) is None
    with pytest.raises(ValueError, match="unscored kind"):
        Score.unscored(conversation_id="c", metric="m", reason="x", kind="made_up")
    assert {"judge_failed", "judge_unusable", "unanswerable_probe", "no_contexts", "no_ground_truth"} <= set(
        UNSCORED_KINDS
    )
