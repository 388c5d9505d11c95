"""DeepEval export (loaded back with the real deepeval), the annotations column, and Ragas / DeepEval samples as
imported runs: a round trip keeps every score, and unknowns stay unknown."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragdive.analysis import RunScores, summarize_run
from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.interop import export_run
from ragdive.interop.imports import import_run
from ragdive.records import Score
from ragdive.store import RunStore
from tests.factories import make_conversation


def scored_run(root: Path) -> RunStore:
    store = RunStore.create(root, run_id="20260101-000000-samples")
    for c in range(3):
        conv = make_conversation(f"conv-{c}", turns=2, index=c)
        store.append_conversation(conv)
        store.append_score(Score(conversation_id=conv.id, turn_index=0, metric="correctness", value=c / 2))
        store.append_score(Score.unscored(conversation_id=conv.id, turn_index=1, metric="correctness", reason="judge"))
        store.append_score(Score(conversation_id=conv.id, metric="forgetfulness", value=float(c == 1)))
    return store


def means(store: RunStore) -> dict[str, tuple[float | None, int, int]]:
    return {s.metric: (s.mean, s.n_scored, s.n_unscored) for s in summarize_run(RunScores.from_store(store))}


def test_deepeval_export_loads_with_deepeval(tmp_path: Path) -> None:
    test_case = pytest.importorskip("deepeval.test_case", reason="the deepeval extra is not installed")
    store = scored_run(tmp_path / "runs")
    assert main(["export", str(store.path), "-o", str(tmp_path / "out"), "--format", "deepeval"]) == 0
    cases = json.loads((tmp_path / "out" / "deepeval_test_cases.json").read_text())
    loaded = [test_case.LLMTestCase(**case) for case in cases]
    assert len(loaded) == 6 and loaded[0].actual_output == "reply 0" and loaded[0].retrieval_context == ["ctx 0"]
    assert loaded[1].metadata["ragdive"]["unscored"] == {"correctness": "judge"}  # a judge failure is not a 0
    dialogues = json.loads((tmp_path / "out" / "deepeval_conversations.json").read_text())
    conversational = [test_case.ConversationalTestCase.model_validate(d) for d in dialogues]
    assert [t.role for t in conversational[0].turns] == ["user", "assistant", "user", "assistant"]
    assert conversational[1].metadata["ragdive"]["scores"] == {"forgetfulness": 1.0}


@pytest.mark.parametrize("file_name", ["deepeval_test_cases.json", "deepeval_conversations.json"])
def test_a_deepeval_export_imports_back_with_the_same_means(tmp_path: Path, file_name: str) -> None:
    store = scored_run(tmp_path / "runs")
    export_run(store, tmp_path / "out", ["deepeval"])
    back = import_run("deepeval", [tmp_path / "out" / file_name], tmp_path / "runs" / "back")
    before, after = means(store), means(back)
    if file_name == "deepeval_test_cases.json":  # per-turn scores only
        assert after == {"correctness": before["correctness"]}
        assert back.read_manifest().provenance.shape == "single-turn"  # type: ignore[union-attr]
    else:
        assert after == {"forgetfulness": before["forgetfulness"]}
        turns = back.current_conversations()[0].turns
        assert [t.question_type for t in turns] == ["initial", "unknown"]
    assert back.read_manifest().totals.prompt_tokens is None
    assert {tuple(c.document_ids) for c in back.current_conversations()} == {("doc-1",)}  # compare can pair


def test_ragas_single_turn_results_become_a_static_shaped_run(tmp_path: Path) -> None:
    rows = [
        {"user_input": "q1", "response": "a1", "retrieved_contexts": ["c"], "reference": "r1", "faithfulness": 1.0},
        {"user_input": "q2", "response": "a2", "retrieved_contexts": [], "reference": "r2", "faithfulness": None},
        {"user_input": "q3", "response": "a3", "retrieved_contexts": [], "faithfulness": 0.5},
    ]
    path = tmp_path / "result.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = import_run("ragas", [path], tmp_path / "run")
    assert means(store) == {"faithfulness": (0.75, 2, 1)}
    m = store.read_manifest()
    assert m.kind == "imported" and m.provenance is not None and m.provenance.shape == "single-turn"
    assert any("no reference" in n for n in m.provenance.notes)
    turn = store.current_conversations()[2].turns[0]
    assert (turn.standalone_question, turn.answer, turn.ground_truth) == ("q3", "a3", "")


def test_ragas_multi_turn_samples_become_conversations(tmp_path: Path) -> None:
    store = scored_run(tmp_path / "runs")
    export_run(store, tmp_path / "out", ["ragas"])
    try:
        from ragas import EvaluationDataset

        assert len(EvaluationDataset.from_jsonl(str(tmp_path / "out" / "ragas_multi_turn.jsonl"))) == 3
    except ImportError:
        pass  # the ragas extra is absent: the import below still reads the file
    back = import_run("ragas", [tmp_path / "out" / "ragas_multi_turn.jsonl"], tmp_path / "runs" / "back")
    original, imported = store.current_conversations()[0], back.current_conversations()[0]
    assert [t.rag_input for t in imported.turns] == [t.rag_input for t in original.turns]
    assert [t.answer for t in imported.turns] == [t.answer for t in original.turns]
    provenance = back.read_manifest().provenance
    assert provenance is not None and any("stand-alone" in what for what in provenance.invented)


def test_a_sample_file_without_answers_is_a_question_set_not_a_run(tmp_path: Path) -> None:
    path = tmp_path / "testset.jsonl"
    path.write_text(json.dumps({"user_input": "q", "reference": "r"}) + "\n")
    with pytest.raises(ConfigError, match="ragdive static"):
        import_run("ragas", [path], tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_ratings_appear_in_an_annotations_column_when_there_are_any(tmp_path: Path) -> None:
    store = scored_run(tmp_path / "runs")
    export_run(store, tmp_path / "plain", ["csv"])
    with open(tmp_path / "plain" / "turns.csv", encoding="utf-8", newline="") as fh:
        assert "annotations" not in next(csv.reader(fh))  # no ratings file: the columns stay as they were
    lines = [
        {
            "run_id": "r",
            "conversation_id": "conv-0",
            "turn_index": 0,
            "rater": "ann",
            "criterion": "correct",
            "value": True,
        },
        {
            "run_id": "r",
            "conversation_id": "conv-0",
            "turn_index": 0,
            "rater": "bo",
            "criterion": "correct",
            "value": False,
        },
        {
            "run_id": "r",
            "conversation_id": "conv-0",
            "turn_index": None,
            "rater": "ann",
            "criterion": "coherent",
            "value": True,
        },
    ]
    (store.path / "annotations.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"torn')
    export_run(store, tmp_path / "rated", ["csv"])
    with open(tmp_path / "rated" / "turns.csv", encoding="utf-8", newline="") as fh:
        turns = list(csv.DictReader(fh))
    assert json.loads(turns[0]["annotations"]) == {"correct": {"ann": True, "bo": False}}
    assert turns[1]["annotations"] == ""
    with open(tmp_path / "rated" / "conversations.csv", encoding="utf-8", newline="") as fh:
        conversations = list(csv.DictReader(fh))
    assert json.loads(conversations[0]["annotations"]) == {"coherent": {"ann": True}}


def test_an_imported_run_exports_to_parquet_that_pandas_reads(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    pytest.importorskip("pyarrow", reason="the export extra (pyarrow) is not installed")
    data = Path(__file__).parent / "data" / "reference"
    sources = sorted(data.glob("*baseline*"))
    store = import_run("ragdive-reference", sources, tmp_path / "run")
    export_run(store, tmp_path / "out", ["parquet"])
    turns = pd.read_parquet(tmp_path / "out" / "turns.parquet")
    assert list(turns["question_type"]) == ["initial", "follow-up", "initial", "unknown", "initial", "clarification"]
    assert turns["score_faithfulness"].isna().sum() == 1 and turns["unscored_faithfulness"].notna().sum() == 1
    conversations = pd.read_parquet(tmp_path / "out" / "conversations.parquet")
    assert list(conversations["score_forgetfulness"]) == [0.0, 1.0, 0.0]


def test_ragas_and_deepeval_question_sets_feed_the_static_pipeline(tmp_path: Path) -> None:
    from ragdive.evaluation.static import load_static_dataset

    ragas = tmp_path / "testset.jsonl"
    ragas.write_text(json.dumps({"user_input": "Who?", "reference": "Ann", "reference_contexts": ["x"]}) + "\n")
    deepeval = tmp_path / "goldens.json"
    deepeval.write_text(json.dumps({"goldens": [{"input": "When?", "expected_output": "1990", "id": "g1"}]}))
    assert [(i.question, i.answer) for i in load_static_dataset(ragas)] == [("Who?", "Ann")]
    assert [(i.question, i.answer, i.document_id) for i in load_static_dataset(deepeval)] == [("When?", "1990", "g1")]
    multi = tmp_path / "multi.jsonl"
    multi.write_text(json.dumps({"user_input": [{"content": "hi", "type": "human"}], "reference": "r"}) + "\n")
    with pytest.raises(ConfigError, match="multi-turn"):
        load_static_dataset(multi)
