"""ragdive import: made-up files of the RAG-DIVE reference implementation's shape (tests/data/reference) become
runs of kind imported whose compare output equals the means computed directly from the files; unknowns are shown
as unknown; a bad file is one readable error and leaves no run behind."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from ragdive.api import compare
from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.interop.imports import import_run
from ragdive.store import RunStore

DATA = Path(__file__).parent / "data" / "reference"
SINGLE = {
    "correctness_aspect_critic": "correctness",
    "faithfulness_aspect_critic": "faithfulness",
    "context_precision_critic": "context_precision",
    "context_recall_critic": "context_recall",
}
MULTI = {"forgetfulness_aspect_critic": "forgetfulness", "context_retention_aspect_critic": "context_retention"}


def files(tag: str) -> list[Path]:
    return [
        DATA / f"conversation_data_{tag}.json",
        DATA / f"single_turn_evaluation_results_{tag}_evaluation.json",
        DATA / f"multi_turn_evaluation_results_{tag}_evaluation.json",
    ]


def means_from_files(tag: str) -> dict[str, float]:
    """Straight from the evaluation files: the mean of every row's value that is a number (nan left out). The
    multi-turn rows repeat each conversation's verdict per message; all conversations here have the same length,
    so the mean over rows is the mean over conversations."""
    means = {}
    for kind, keys in (("single_turn", SINGLE), ("multi_turn", MULTI)):
        rows = json.loads((DATA / f"{kind}_evaluation_results_{tag}_evaluation.json").read_text())["detailed_results"]
        for key, metric in keys.items():
            values = [float(r[key]) for r in rows if not math.isnan(float(r[key]))]
            means[metric] = sum(values) / len(values)
    return means


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Path]:
    runs = tmp_path / "runs"
    for tag in ("baseline", "history_off"):
        assert main(["import", "ragdive-reference", *map(str, files(tag)), "-o", str(runs / tag)]) == 0
    assert sorted(p.name for p in runs.iterdir()) == ["baseline", "history_off"]  # no staging folder left
    return runs / "baseline", runs / "history_off"


def test_compare_of_imported_runs_equals_the_means_of_the_files(imported: tuple[Path, Path], capsys) -> None:
    base, cand = imported
    expected_base, expected_cand = means_from_files("baseline"), means_from_files("history_off")
    (comparison,) = compare(base, cand)
    got = {m.metric: (m.baseline_mean, m.mean) for m in comparison.metrics}
    assert set(got) == set(expected_base)
    for metric, (b, c) in got.items():
        assert b == pytest.approx(expected_base[metric], abs=1e-12)
        assert c == pytest.approx(expected_cand[metric], abs=1e-12)
    capsys.readouterr()
    assert main(["compare", str(base), str(cand)]) == 0
    printed = capsys.readouterr().out
    for metric in expected_base:
        row = next(line for line in printed.splitlines() if line.strip().startswith(metric))
        assert f"{expected_base[metric]:.3f}" in row and f"{expected_cand[metric]:.3f}" in row


def test_the_manifest_says_where_the_run_came_from(imported: tuple[Path, Path]) -> None:
    m = RunStore.open(imported[0]).read_manifest()
    assert m.kind == "imported" and m.provenance is not None
    p = m.provenance
    assert p.source_format == "ragdive-reference" and p.importer_version >= 1
    import hashlib

    digests = {f.name: f.sha256 for f in p.files}
    assert digests == {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files("baseline")}
    assert any("conversation ids" in what for what in p.invented) and any("seeds" in what for what in p.invented)
    assert m.totals.prompt_tokens is None and m.totals.completion_tokens is None and m.totals.cost_usd is None
    assert (m.totals.conversations, m.totals.turns, m.totals.scores, m.totals.unscored) == (3, 6, 30, 1)
    assert any("nan" in note for note in p.notes)  # the file's own faithfulness average is nan


def test_records_keep_the_source_and_unknowns(imported: tuple[Path, Path]) -> None:
    store = RunStore.open(imported[0])
    conversations = store.current_conversations()
    assert [c.persona for c in conversations] == ["precise", "confused", "skeptical"]
    assert conversations[0].document_ids == ["Lake Kariba"]
    types = [t.question_type for c in conversations for t in c.turns]
    assert types == ["initial", "follow-up", "initial", "unknown", "initial", "clarification"]  # "Direct": unknown
    turn = conversations[0].turns[1]
    assert turn.rag_input == "And how deep does it get at most?"
    assert turn.standalone_question == "What is the maximum depth of Lake Kariba?" and turn.ground_truth == "97 metres"
    assert turn.contexts[0].source == "Lake Kariba" and turn.contexts[0].id == "lake-1"
    nan = [s for s in store.current_scores() if not s.scored]
    assert len(nan) == 1 and (nan[0].metric, nan[0].turn_index) == ("faithfulness", 1)
    assert "nan" in (nan[0].unscored_reason or "")
    precision = next(s for s in store.current_scores() if s.metric == "context_precision" and s.turn_index == 0)
    assert precision.value == 0.99999999995  # kept as the source wrote it


def test_unknowns_are_shown_as_unknown(imported: tuple[Path, Path], capsys) -> None:
    base = str(imported[0])
    capsys.readouterr()
    assert main(["runs", "show", base]) == 0
    shown = capsys.readouterr().out
    assert "kind       imported" in shown
    assert "unknown prompt + unknown completion tokens, cost unknown" in shown
    assert re.search(r"source\s+conversation_data_baseline.json", shown) and "invented" in shown
    assert main(["evaluate", base, "--model", "judge=scripted/judge", "--by", "question_type"]) == 0
    assert "made by another tool (imported)" in capsys.readouterr().out  # not "another version of the metric"
    assert main(["analyze", base]) == 0
    analysed = capsys.readouterr().out
    assert "unknown" in analysed


def test_a_row_that_does_not_match_its_turn_is_refused_and_nothing_is_written(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "single_turn.json"
    data = json.loads(files("baseline")[1].read_text())
    data["detailed_results"][2], data["detailed_results"][3] = data["detailed_results"][3], data["detailed_results"][2]
    bad.write_text(json.dumps(data))
    conv = tmp_path / "conversation_data_baseline.json"
    shutil.copy(files("baseline")[0], conv)
    assert main(["import", "ragdive-reference", str(conv), str(bad), "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "detailed_results[2]" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()
    capsys.readouterr()
    good = [str(conv), str(files("baseline")[1])]
    assert main(["import", "ragdive-reference", *good, "-o", str(tmp_path / "run")]) == 0
    assert main(["import", "ragdive-reference", *good, "-o", str(tmp_path / "run")]) == 2  # never overwritten
    assert "already exists" in capsys.readouterr().err


def test_values_that_are_not_scores_are_refused(tmp_path: Path) -> None:
    data = json.loads(files("baseline")[1].read_text())
    data["detailed_results"][0]["correctness_aspect_critic"] = "yes"
    bad = tmp_path / "eval.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"detailed_results\[0\].*'yes'"):
        import_run("ragdive-reference", [files("baseline")[0], bad], tmp_path / "run")
    with pytest.raises(ConfigError, match="unknown import format"):
        import_run("nope", [files("baseline")[0]], tmp_path / "run")


def test_a_multi_turn_verdict_must_be_the_same_on_every_message(tmp_path: Path) -> None:
    data = json.loads(files("baseline")[2].read_text())
    data["detailed_results"][1]["forgetfulness_aspect_critic"] = (
        "1" if data["detailed_results"][0]["forgetfulness_aspect_critic"] == "0" else "0"
    )
    bad = tmp_path / "multi.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="differs between messages"):
        import_run("ragdive-reference", [files("baseline")[0], bad], tmp_path / "run")


def test_tokens_stay_unknown_when_ragdive_spends_on_an_imported_run(imported: tuple[Path, Path]) -> None:
    from ragdive.records import ModelSpend
    from ragdive.store import RunRecorder

    store = RunStore.open(imported[0])
    spent = ModelSpend(role="judge", model="scripted/j", calls=2, prompt_tokens=40, completion_tokens=8, cost_usd=0.1)
    totals = RunRecorder(store).record(spend=[spent]).totals
    # what the source spent is unknown: a known addition does not make the total known
    assert totals.prompt_tokens is None and totals.completion_tokens is None and totals.cost_usd is None
    assert [(s.role, s.prompt_tokens) for s in totals.spend] == [("judge", 40)]  # ragdive's own spend is kept


def test_the_report_of_an_imported_run_says_unknown(imported: tuple[Path, Path]) -> None:
    assert main(["report", str(imported[0])]) == 0
    html = (imported[0] / "report.html").read_text(encoding="utf-8")
    assert "unknown / unknown" in html and "None" not in html.split("tokens (prompt / completion)")[1][:60]
