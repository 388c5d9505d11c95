"""The paper's data as it is stored (issue 25): evaluation files without their conversation files, contexts as plain
strings, turns without a ground truth, and the validator's .log files in both forms (raw, and classified by
people). Made-up files of those shapes import, and compare / analyze over them equal figures computed directly
from the files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragdive.api import compare
from ragdive.cli.main import main
from ragdive.evaluation.metrics.base import NO_GROUND_TRUTH
from ragdive.evaluation.metrics.single_turn.correctness import Correctness
from ragdive.interop.imports.validator_log import category_of, parse_log
from ragdive.records import FailedCheck
from ragdive.store import RunStore

from .test_import import DATA, means_from_files

TITLES = ["Lake Kariba", "Fire triangle", "AT HOP card"]


def evaluation_files_alone(tmp_path: Path, tag: str) -> list[Path]:
    """The tag's two evaluation files as the reference names them (turns_2: two turns per conversation), naming a
    conversation file that is not given, and a titles file."""
    out = []
    for kind in ("single_turn", "multi_turn"):
        data = json.loads((DATA / f"{kind}_evaluation_results_{tag}_evaluation.json").read_text())
        data["file_path"] = f"./data/conversation_data_model_turns_2_conversation_3_{tag}.json"
        path = tmp_path / f"{kind}_evaluation_results_model_turns_2_conversation_3_{tag}_evaluation.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        out.append(path)
    titles = tmp_path / "titles.json"
    titles.write_text(json.dumps(TITLES), encoding="utf-8")
    return [*out, titles]


def test_evaluation_files_alone_rebuild_the_conversations_and_compare_equals_the_files(tmp_path: Path) -> None:
    runs = {}
    for tag in ("baseline", "history_off"):
        folder = tmp_path / tag
        folder.mkdir()
        paths = evaluation_files_alone(folder, tag)
        runs[tag] = tmp_path / "runs" / tag
        assert main(["import", "ragdive-reference", *map(str, paths), "-o", str(runs[tag])]) == 0
    (comparison,) = compare(runs["baseline"], runs["history_off"])
    base, cand = means_from_files("baseline"), means_from_files("history_off")
    got = {m.metric: (m.baseline_mean, m.mean) for m in comparison.metrics}
    assert set(got) == set(base)
    for metric, (b, c) in got.items():
        assert (b, c) == (pytest.approx(base[metric], abs=1e-12), pytest.approx(cand[metric], abs=1e-12))

    store = RunStore.open(runs["baseline"])
    conversations = store.current_conversations()
    original = json.loads((DATA / "conversation_data_baseline.json").read_text())
    assert [c.document_ids for c in conversations] == [[t] for t in TITLES]  # by position in the titles file
    for conv, source in zip(conversations, original, strict=True):
        for turn, raw in zip(conv.turns, source["conversation"], strict=True):
            assert (turn.rag_input, turn.standalone_question, turn.answer) == (
                raw["rag_input"],
                raw["question"],
                raw["rag_answer"],
            )
            assert turn.ground_truth == "" and turn.question_type == "unknown" and turn.contexts == []
    provenance = store.read_manifest().provenance
    assert provenance is not None and any("rebuilt from the evaluation files" in s for s in provenance.invented)
    assert any("ground truth" in note for note in provenance.notes)


def test_a_split_that_does_not_fit_the_turn_count_is_refused(tmp_path: Path, capsys) -> None:
    paths = evaluation_files_alone(tmp_path, "baseline")
    for path in paths[:2]:
        data = json.loads(path.read_text())
        data["file_path"] = "conversation_data_model_turns_4_conversation_3.json"  # 6 turns are not conversations of 4
        path.write_text(json.dumps(data))
    assert main(["import", "ragdive-reference", *map(str, paths), "-o", str(tmp_path / "run")]) == 2
    assert "do not split into conversations of 4" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_string_contexts_metadata_and_a_missing_ground_truth(tmp_path: Path) -> None:
    data = json.loads((DATA / "conversation_data_baseline.json").read_text())
    first = data[0]["conversation"][0]
    first["context"] = ["Lake Kariba is a reservoir on the Zambezi river.", "Its average depth is 29 metres."]
    data[1]["conversation"][0]["context"][0]["metadata"] = {"title": "Fire triangle", "url": "https://example.org/f"}
    del data[0]["conversation"][1]["answer"]  # no ground truth for this turn
    conversation_file = tmp_path / "conversation_data_baseline.json"
    conversation_file.write_text(json.dumps(data), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["import", "ragdive-reference", str(conversation_file), "-o", str(run)]) == 0
    conversations = RunStore.open(run).current_conversations()
    turn = conversations[0].turns[0]
    assert [c.text for c in turn.contexts] == first["context"] and turn.contexts[0].source is None
    kept = conversations[1].turns[0].contexts[0]
    assert kept.metadata == {"title": "Fire triangle", "url": "https://example.org/f"}
    assert kept.source == "https://example.org/f"
    unknown = conversations[0].turns[1]
    assert unknown.ground_truth == ""
    assert Correctness().precheck(unknown) == (
        "no_ground_truth",
        NO_GROUND_TRUTH,
    )  # unscored when judged again, never scored on ""
    assert Correctness().precheck(turn) is None


RAW_LOG = """Validation failed for title: Lake Kariba
Initial Answer: {'rag_input': 'How deep is it at most?', 'question': 'What is the maximum depth of Lake Kariba?', 'answer': '90 metres', 'type': 'Follow-up'}
Reason: The document says 97 metres.

Validation failed for title: Fire triangle
Initial Answer: {'rag_input': "And what's the fourth one?", 'question': 'What is the fourth element?', 'answer': 'Water', 'type': 'Clarification'}
Reason: The question is not standalone.
"""  # noqa: E501

# the classified copy as stored: a blank line before a Class line too
CLASSIFIED_LOG = """Validation failed for title: Lake Kariba
Initial Answer: {'rag_input': 'How deep is it at most?', 'question': 'What is the maximum depth of Lake Kariba?', 'answer': '90 metres', 'type': 'Follow-up'}
Reason: The document says 97 metres.

Class: GroundTruth

Validation failed for title: Fire triangle
Initial Answer: {'rag_input': "And what's the fourth one?", 'question': 'What is the fourth element?', 'answer': 'Water', 'type': 'Clarification'}
Reason: The question is not standalone.
Class: notStandalone

Validation failed for title: AT HOP card
Initial Answer: {'rag_input': 'When was the AT HOP card launched?', 'question': 'When was the AT HOP card launched?', 'answer': 'In 2012', 'type': 'Initial'}
Reason: The answer mentions the document.
Class: Groundtruth

Validation failed for title: AT HOP card
Initial Answer: {'rag_input': 'ok', 'question': 'ok', 'answer': 'ok', 'type': 'Follow-up'}
Reason: Broken JSON
went on over two lines.
Class: formatIssues
"""  # noqa: E501


def test_log_classes_map_case_insensitively_and_an_unknown_one_is_other(tmp_path: Path) -> None:
    assert category_of("GroundTruth") == category_of("Groundtruth") == FailedCheck.GROUND_TRUTH_UNSUPPORTED
    assert category_of("documentmentioned") == category_of("documentMentioned") == FailedCheck.DOCUMENT_MENTIONED
    assert category_of("RAG_InputNotConnected") == FailedCheck.RAG_INPUT_NOT_CONNECTED
    assert category_of("questionNotConsistent") == FailedCheck.QUESTION_INCONSISTENT
    assert category_of("Type") == FailedCheck.WRONG_TYPE
    assert category_of("formatIssues") == FailedCheck.OTHER and category_of(None) is None
    log = tmp_path / "run_0.log"
    log.write_text(CLASSIFIED_LOG, encoding="utf-8")
    entries = parse_log(log)
    assert [e.category for e in entries] == ["GroundTruth", "notStandalone", "Groundtruth", "formatIssues"]
    assert entries[3].reason == "Broken JSON\nwent on over two lines."


@pytest.mark.parametrize(("text", "categories"), [(RAW_LOG, None), (CLASSIFIED_LOG, "classified")])
def test_validator_logs_import_and_analyze_reproduces_rate_and_shares(
    tmp_path: Path, capsys, text: str, categories: str | None
) -> None:
    log = tmp_path / "conversation_data_baseline.log"
    log.write_text(text, encoding="utf-8")
    paths = [DATA / "conversation_data_baseline.json", log]
    run = tmp_path / "run"
    assert main(["import", "ragdive-reference", *map(str, paths), "-o", str(run)]) == 0
    store = RunStore.open(run)
    rejections = store.current_rejections()
    blocks = text.count("Validation failed for title:")
    assert len(rejections) == blocks == store.read_manifest().totals.rejections
    turns = sum(len(c.turns) for c in store.current_conversations())
    capsys.readouterr()
    assert main(["analyze", str(run), "--uniqueness", "exact", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["groups"]["all"]["rejections"]
    assert stats["total"] == blocks and stats["per_100_turns"] == pytest.approx(100 * blocks / turns)
    if categories is None:
        assert stats["category_shares"] == {"uncategorised": 1.0}  # raw logs carry no class
    else:
        assert stats["category_shares"] == {"ground_truth_unsupported": 0.5, "not_standalone": 0.25, "other": 0.25}
        other = next(r for r in rejections if FailedCheck.OTHER in r.categories)
        assert other.source_categories == ["formatIssues"]
    # a draft whose stand-alone question is a turn's, word for word, is placed on that turn (Lake Kariba's turn 2,
    # AT HOP card's turn 1); the others' turn stays unknown, and no attempt number is known
    placed = {r.draft.rag_input: r.turn_index for r in rejections}
    assert placed["How deep is it at most?"] == 1 and placed["And what's the fourth one?"] is None
    if categories:
        assert placed["When was the AT HOP card launched?"] == 0 and placed["ok"] is None
    assert all(r.attempt is None for r in rejections)
    assert stats["by_turn"] == {"2": 1, **({"1": 1} if categories else {})}  # only the placed ones


def test_a_log_title_no_conversation_has_is_refused(tmp_path: Path, capsys) -> None:
    log = tmp_path / "x.log"
    log.write_text(RAW_LOG.replace("Lake Kariba", "Mount Nowhere"), encoding="utf-8")
    shutil.copy(DATA / "conversation_data_baseline.json", tmp_path / "c.json")
    assert main(["import", "ragdive-reference", str(tmp_path / "c.json"), str(log), "-o", str(tmp_path / "r")]) == 2
    assert "Mount Nowhere" in capsys.readouterr().err and not (tmp_path / "r").exists()
