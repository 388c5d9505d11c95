"""store.completeness counts from slim records (store.counts), not whole conversations and scores: the same
figures as counting the current records themselves, on a run with every case the rule tells apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.records import JUDGE_FAILURES, Score, kind_of_unscored
from ragdive.store import RunStore
from ragdive.store.completeness import completeness
from ragdive.store.counts import FileCounts
from tests.factories import make_conversation


def by_records(store: RunStore) -> tuple[int, int, int, int]:
    """The rule over whole records (what completeness computed before it read slim records)."""
    conversations, scores = store.current_conversations(), store.current_scores()
    in_error = sum(c.status == "error" and not any(t.error for t in c.turns) for c in conversations)
    failed = sum(kind_of_unscored(s) in JUDGE_FAILURES for s in scores)
    return len(conversations), in_error, len(scores), failed


def test_slim_completeness_equals_the_rule_over_whole_records(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    ok, cut = make_conversation("ok"), make_conversation("cut").model_copy(update={"status": "error"})
    failed_turn = make_conversation("static")
    failed_turn.turns[0].error, failed_turn.status = "target down", "error"  # the target's answer, not a gap
    redone = make_conversation("redone").model_copy(update={"status": "error"})
    for conversation in (ok, cut, failed_turn, redone):
        store.append_conversation(conversation)

    def score(cid: str, metric: str, stamp: object = None, **kw: object) -> Score:
        return Score(conversation_id=cid, turn_index=0, metric=metric, conversation_finished=stamp, **kw)

    store.append_scores(
        [
            score("ok", "faithfulness", value=0.5),
            score("ok", "recall", unscored_kind="judge_failed", unscored_reason="judge call failed: 502"),
            score("ok", "precision", unscored_reason="judge output unusable: not JSON"),  # an old line: no kind
            score("ok", "correctness", unscored_reason="x", details={"judge_failed": True}),  # older still
            score("ok", "probe", unscored_kind="unanswerable_probe", unscored_reason="a probe"),  # not a gap
            score("redone", "faithfulness", stamp=redone.finished, unscored_kind="judge_failed", unscored_reason="-"),
        ]
    )
    again = make_conversation("redone")  # resumed: a new line, its old score stale
    store.append_conversation(again)
    store.append_scores([score("ok", "recall", value=1.0)])  # retried: the latest line wins

    expected = by_records(store)
    assert expected == (4, 1, 5, 2)  # the run holds every case
    got = completeness(store)
    assert (got.conversations, got.in_error, got.items, got.judge_failed) == expected
    counter = FileCounts(store.path)
    counter.update()  # a recorder's counter that read most lines before the end
    store.append_scores([score("ok", "precision", value=0.0)])
    got = completeness(store, counter)
    assert (got.items, got.judge_failed) == (by_records(store)[2], by_records(store)[3]) == (5, 1)


def test_the_end_of_a_run_reads_its_records_once_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.analysis import RunScores

    store = RunStore.create(tmp_path)
    store.append_conversation(make_conversation("a"))
    store.append_scores([Score(conversation_id="a", turn_index=0, metric="m", value=0.5)])
    reads: list[int] = []
    read = RunStore.current_conversations
    monkeypatch.setattr(RunStore, "current_conversations", lambda self: reads.append(1) or read(self))
    first = RunScores.from_store(store)
    first.scores.clear()  # a reader's own lists
    again = RunScores.from_store(RunStore.open(store.path))  # the alarms, then the summary and the report
    assert len(reads) == 1 and [s.value for s in again.scores] == [0.5]
    store.append_scores([Score(conversation_id="a", turn_index=1, metric="m", value=1.0)])
    assert [s.value for s in RunScores.from_store(store).scores] == [0.5, 1.0] and len(reads) == 2
