"""Validity alarms: computed from a run's files, each past its configured threshold; printed after the summary,
at the top of the report and in the manifest; --strict turns any into exit 5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.analysis import RunScores, validity_alarms
from ragdive.cli.main import main
from ragdive.config import AlarmsConfig
from ragdive.records import Conversation, Score
from ragdive.store import RunStore

from ..factories import make_conversation
from .test_evaluator import make_run


def run_of(conversations: list[Conversation], scores: list[Score]) -> RunScores:
    return RunScores("r", conversations, scores)


def test_each_alarm_fires_past_its_threshold_and_only_then() -> None:
    convs = [make_conversation(f"c{i}", turns=2, index=i) for i in range(10)]  # all on the same seed document
    convs[0].turns[1].validator_overruled = True
    convs[1].turns[0].contexts = []
    convs[2].status = "error"
    scores = [Score(conversation_id=c.id, turn_index=0, metric="faithfulness", value=1.0) for c in convs]
    scores += [
        Score.unscored(conversation_id=c.id, turn_index=0, metric="correctness", reason="judge output unusable (x)")
        for c in convs
    ]
    codes = {a.code: a for a in validity_alarms(run_of(convs, scores))}
    assert set(codes) == {
        "judge_failure_share",  # 10 of 20 items
        "error_share",  # 1 of 10 conversations, default threshold 0
        "seed_reuse_share",  # 10 of 10 share doc-1
        "empty_metric",  # correctness: none of 10 scored
    }
    assert codes["judge_failure_share"].value == 0.5 and "10 of 20" in codes["judge_failure_share"].message
    assert "correctness: none of 10 items scored (judge_unusable 10)" == codes["empty_metric"].message
    # 1 of 20 turns overruled (5 %) and 1 of 20 without contexts: under the 10 % defaults; stricter limits fire
    strict = AlarmsConfig(overruled_share=0.01, no_context_share=0.01, seed_reuse_share=None, empty_metrics=False)
    assert {a.code for a in validity_alarms(run_of(convs, scores), strict)} == {
        "overruled_share",
        "no_context_share",
        "judge_failure_share",
        "error_share",
    }
    for i, c in enumerate(convs):
        c.document_ids = [f"doc-{i}"]
        c.status = "finished"
    clean = [s for s in scores if s.scored]
    assert validity_alarms(run_of(convs, clean)) == []


def test_alarms_after_the_summary_in_the_manifest_and_report_and_strict_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = make_run(tmp_path / "runs", n=3, turns=2)  # every conversation on doc-1: seed reuse
    capsys.readouterr()
    assert main(["evaluate", str(store.path), "--model", "judge=rulejudge/x", "--metrics", "faithfulness"]) == 0
    out = capsys.readouterr().out
    assert out.index("validity alarms (1)") > out.index("per-metric summary")
    assert "seed_reuse_share: 3 of 3 conversations share their seed documents" in out
    manifest = json.loads((store.path / "manifest.json").read_text())
    assert [a["code"] for a in manifest["alarms"]] == ["seed_reuse_share"]
    code = main(["evaluate", str(store.path), "--model", "judge=rulejudge/x", "--metrics", "faithfulness", "--strict"])
    assert code == 5
    assert main(["report", str(store.path)]) == 0
    html = (store.path / "report.html").read_text(encoding="utf-8")
    assert html.index('data-alarm="seed_reuse_share"') < html.index('id="setup"')  # at the top
    capsys.readouterr()
    assert main(["runs", "show", str(store.path)]) == 0
    assert "alarm      seed_reuse_share" in capsys.readouterr().out
    config = tmp_path / "quiet.yaml"
    config.write_text("evaluation:\n  alarms:\n    seed_reuse_share: null\n", encoding="utf-8")
    assert RunStore.open(store.path)  # thresholds come from the config given
    args = ["evaluate", str(store.path), "--model", "judge=rulejudge/x", "--config", str(config), "--strict"]
    assert main([*args, "--metrics", "faithfulness"]) == 0
    assert "validity alarms: none" in capsys.readouterr().out
