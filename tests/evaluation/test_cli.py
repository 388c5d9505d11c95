from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.records import Context, Score
from ragdive.store import RunStore
from tests.factories import make_conversation


def dynamic_run(root: Path, n: int = 3) -> RunStore:
    store = RunStore.create(root, config={"models": {"judge": {"model": "rulejudge/from-manifest", "api_key": "s"}}})
    for c in range(n):
        conv = make_conversation(f"conv-{c}", turns=2, index=c)
        for i, t in enumerate(conv.turns):
            conv.turns[i] = t.model_copy(
                update={"answer": t.ground_truth, "contexts": [Context(text=f"about {t.ground_truth}")]}
            )
        store.append_conversation(conv)
    return store


def test_evaluate_command_writes_scores_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = dynamic_run(tmp_path)
    assert main(["evaluate", str(store.path), "--model", "judge=rulejudge/cli", "--metrics", "correctness"]) == 0
    out = capsys.readouterr().out
    assert "6 scores written (0 unscored)" in out and "correctness" in out and "1.000" in out
    assert main(["evaluate", str(store.path), "--model", "judge=rulejudge/cli"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    # the rest of the default metrics now, correctness skipped: 3 conversations x (2 turns x 3 + 2)
    assert "24 scores written" in out and "6 already scored" in out
    assert "30/30" in captured.err  # progress: done of the run's total, the 6 scored before included
    manifest = store.read_manifest()
    assert manifest.totals.scores == 30 and manifest.totals.unscored == 0


def test_evaluate_uses_the_manifest_judge_without_its_masked_key(tmp_path: Path) -> None:
    store = dynamic_run(tmp_path, n=1)
    assert main(["evaluate", str(store.path), "--metrics", "forgetfulness"]) == 0
    assert store.read_manifest().models["judge"] == "rulejudge/from-manifest"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metrics", "faithfulness,bogus"], "unknown metric(s) bogus"),
        (["--model", "judge=nosuchprovider/x"], "unknown model provider 'nosuchprovider'"),
    ],
)
def test_evaluate_user_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    store = RunStore.create(tmp_path)
    assert main(["evaluate", str(store.path), "--model", "judge=rulejudge/x", *args]) == 2
    assert message in capsys.readouterr().err


def test_evaluate_without_a_judge_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore.create(tmp_path)
    assert main(["evaluate", str(store.path)]) == 2
    assert "no judge model" in capsys.readouterr().err


def scored_run(root: Path, values: list[float | None]) -> RunStore:
    store = RunStore.create(root)
    for i, value in enumerate(values):
        conv = make_conversation(f"c{i}", turns=1).model_copy(update={"document_ids": [f"doc-{i}"]})
        store.append_conversation(conv)
        if value is None:
            store.append_score(Score.unscored(conversation_id=conv.id, metric="correctness", reason="judge failed"))
        else:
            store.append_score(Score(conversation_id=conv.id, turn_index=0, metric="correctness", value=value))
    return store


def test_compare_command_marks_band_arrow_and_paired_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base_a = scored_run(tmp_path / "a", [1, 0, 1, 0, 1, 0, 1, 0, 1, 1])  # 0.6
    base_b = scored_run(tmp_path / "b", [1, 0, 1, 0, 1, 0, 1, 1, 1, 1])  # 0.7
    better = scored_run(tmp_path / "c", [1, 1, 1, 1, 1, 1, 1, 1, 1, None])  # 1.0 over 9 scored
    code = main(["compare", f"{base_a.path},{base_b.path}", str(better.path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 repeated runs" in out
    assert "1.000* ↑" in out and "0.600–0.700" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("correctness") and "↑" in line)
    assert row.rstrip().endswith("1")  # the unscored item is counted, not averaged


def test_compare_needs_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = scored_run(tmp_path, [1.0])
    assert main(["compare", str(store.path)]) == 2
    assert "at least one other run" in capsys.readouterr().err


def test_evaluate_by_groupings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = dynamic_run(tmp_path, n=2)
    args = ["evaluate", str(store.path), "--model", "judge=rulejudge/x", "--metrics", "correctness"]
    assert main([*args, "--by", "turn", "--by", "question_type", "--by", "persona"]) == 0
    out = capsys.readouterr().out
    assert "correctness by turn" in out and "follow-up" in out and "precise" in out
    assert main([*args, "--by", "colour"]) == 2
    assert "--by 'colour'" in capsys.readouterr().err


def test_compare_one_group_of_repeats_shows_their_spread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = scored_run(tmp_path / "a", [1, 0, 1, 1])
    b = scored_run(tmp_path / "b", [1, 1, 1, 1])
    assert main(["compare", f"{a.path},{b.path}"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("correctness"))
    assert row.split()[1:5] == ["0.875", "0.177", "0.750", "1.000"]  # mean, std, min, max of the run means
