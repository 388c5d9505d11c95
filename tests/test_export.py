"""ragdive export: turns and conversations as CSV and Parquet (read back with pyarrow), Ragas samples as JSONL."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.interop import export_run
from ragdive.records import Context, Score
from ragdive.store import RunStore
from tests.factories import make_conversation


def scored_run(root: Path) -> RunStore:
    store = RunStore.create(root, run_id="20260101-000000-export")
    for c in range(2):
        conv = make_conversation(f"conv-{c}", turns=2, index=c)
        conv.turns[0] = conv.turns[0].model_copy(
            update={
                "answer": 'it says "x", with a comma\nand a new line',
                "contexts": [Context(text="ctx", source="d")],
            }
        )
        store.append_conversation(conv)
        store.append_score(Score(conversation_id=conv.id, turn_index=0, metric="correctness", value=1.0 - c))
        store.append_score(Score.unscored(conversation_id=conv.id, turn_index=1, metric="correctness", reason="judge"))
        store.append_score(Score(conversation_id=conv.id, metric="forgetfulness", value=0.0))
    return store


def test_csv_rows_per_turn_and_conversation_keep_scores_and_unscored_reasons(tmp_path: Path) -> None:
    store = scored_run(tmp_path / "runs")
    assert main(["export", str(store.path), "-o", str(tmp_path / "out")]) == 0
    with open(tmp_path / "out" / "turns.csv", encoding="utf-8", newline="") as fh:
        turns = list(csv.DictReader(fh))
    assert len(turns) == 4 and [t["turn"] for t in turns] == ["1", "2", "1", "2"]  # numbered from 1
    assert turns[0]["answer"] == 'it says "x", with a comma\nand a new line'  # quoted, not broken into rows
    assert json.loads(turns[0]["contexts"]) == ["ctx"] and turns[0]["context_sources"] == "d"
    assert (turns[0]["score_correctness"], turns[2]["score_correctness"]) == ("1.0", "0.0")
    assert turns[1]["score_correctness"] == "" and turns[1]["unscored_correctness"] == "judge"  # never a 0
    with open(tmp_path / "out" / "conversations.csv", encoding="utf-8", newline="") as fh:
        conversations = list(csv.DictReader(fh))
    assert [c["score_forgetfulness"] for c in conversations] == ["0.0", "0.0"]
    assert "score_correctness" not in conversations[0]


def test_parquet_reads_back_with_the_same_values(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="the export extra (pyarrow) is not installed")
    store = scored_run(tmp_path / "runs")
    export_run(store, tmp_path / "out", ["parquet"])
    table = pq.read_table(tmp_path / "out" / "turns.parquet").to_pylist()
    assert [r["score_correctness"] for r in table] == [1.0, None, 0.0, None]
    assert table[1]["unscored_correctness"] == "judge" and table[0]["turn"] == 1


def test_ragas_samples_have_the_fields_ragas_reads(tmp_path: Path) -> None:
    store = scored_run(tmp_path / "runs")
    export_run(store, tmp_path / "out", ["ragas"])
    singles = [json.loads(line) for line in (tmp_path / "out" / "ragas_single_turn.jsonl").read_text().splitlines()]
    multis = [json.loads(line) for line in (tmp_path / "out" / "ragas_multi_turn.jsonl").read_text().splitlines()]
    assert set(singles[0]) == {"user_input", "response", "retrieved_contexts", "reference"}
    assert singles[0]["retrieved_contexts"] == ["ctx"]
    assert [m["type"] for m in multis[0]["user_input"]][:2] == ["human", "ai"]
    try:
        from ragas import MultiTurnSample, SingleTurnSample
    except ImportError:
        return  # the ragas extra is absent here: the shapes above are what its samples take
    SingleTurnSample(**singles[0])
    MultiTurnSample(**multis[0])


def test_an_unknown_format_is_one_error(tmp_path: Path) -> None:
    store = scored_run(tmp_path / "runs")
    with pytest.raises(ConfigError, match="export format"):
        export_run(store, tmp_path / "out", ["xlsx"])
