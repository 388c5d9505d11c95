"""annotations.jsonl: an import is one write, and the latest line per (rater, item, criterion) is what readers see."""

from __future__ import annotations

from pathlib import Path

from ragdive.records import Annotation, item_id
from ragdive.store import ANNOTATIONS, RunStore


def rating(value: bool, rater: str = "ann", turn: int | None = 0) -> Annotation:
    return Annotation(run_id="r", conversation_id="c1", turn_index=turn, rater=rater, criterion="correct", value=value)


def test_a_batch_is_one_write_and_a_later_import_replaces_the_rating(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, run_id="r")
    store.append_annotations([rating(True), rating(True, rater="bob"), rating(False, turn=None)])
    assert (store.path / ANNOTATIONS).read_text(encoding="utf-8").count("\n") == 3
    store.append_annotations([rating(False)])
    current = store.current_annotations()
    assert len(store.annotations().records) == 4 and len(current) == 3
    assert {(a.rater, a.turn_index, a.value) for a in current} == {
        ("ann", 0, False),
        ("bob", 0, True),
        ("ann", None, False),
    }
    store.append_annotations([])
    assert len(store.annotations().records) == 4


def test_a_torn_batch_is_cut_off_and_the_next_one_reads(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, run_id="r")
    (store.path / ANNOTATIONS).write_text('{"run_id": "r", "conv', encoding="utf-8")  # a kill mid-write
    store.append_annotations([rating(True)])
    result = store.annotations()
    # cut back to whole lines before the append (kept in a side file): valid JSON Lines again
    assert result.torn_lines == [] and [a.value for a in result.records] == [True]
    assert '"conv' in (store.path / f"{ANNOTATIONS}.torn").read_text()


def test_item_ids_count_turns_from_one_and_name_the_run() -> None:
    assert item_id("run-1", "conv-2", 0) == "run-1/conv-2/t1"
    assert item_id("run-1", "conv-2") == "run-1/conv-2"  # a dialogue
    assert rating(True, turn=None).item_id == "r/c1" and rating(True, turn=2).item_id == "r/c1/t3"
