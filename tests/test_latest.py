"""The "latest line wins" rule of the append-only files (ragdive.store.latest)."""

from __future__ import annotations

import json
from pathlib import Path

from ragdive.records import FailedCheck, Rejection, Score
from ragdive.store import REJECTIONS, RunStore, latest_rejections, latest_scores

from .factories import make_conversation, make_draft


def rejection(cid: str, turn: int, attempt: int, reason: str = "no") -> Rejection:
    return Rejection(
        conversation_id=cid,
        turn_index=turn,
        attempt=attempt,
        categories=[FailedCheck.NOT_STANDALONE],
        reason=reason,
        draft=make_draft(turn),
    )


def test_a_rejection_id_is_stable_and_given_to_lines_written_before_ids(tmp_path: Path) -> None:
    assert rejection("c1", 0, 2).id == rejection("c1", 0, 2, reason="other").id == "c1/t0/a2"
    store = RunStore.create(tmp_path)
    old_line = rejection("c1", 1, 1).model_dump(mode="json", exclude={"id"})
    (store.path / REJECTIONS).write_text(json.dumps(old_line) + "\n")
    assert [r.id for r in store.rejections().records] == ["c1/t1/a1"]


def test_latest_rejections_keep_the_last_line_per_id_of_conversations_on_disk() -> None:
    lines = [rejection("c1", 0, 1, "first"), rejection("c2", 0, 1), rejection("c1", 0, 1, "again")]
    kept = latest_rejections(lines)
    assert [(r.id, r.reason) for r in kept] == [("c2/t0/a1", "no"), ("c1/t0/a1", "again")]
    assert [r.id for r in latest_rejections(lines, conversation_ids={"c1"})] == ["c1/t0/a1"]


def test_latest_scores_keep_the_last_line_per_item() -> None:
    failed = Score.unscored(conversation_id="c1", turn_index=0, metric="faithfulness", reason="judge failed")
    retried = Score(conversation_id="c1", turn_index=0, metric="faithfulness", value=1.0)
    other = Score(conversation_id="c1", turn_index=1, metric="faithfulness", value=0.0)
    assert latest_scores([failed, other, retried]) == [other, retried]


def test_the_store_reads_current_rejections_and_scores(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    store.append_rejection(rejection("c1", 0, 1, "first"))
    store.append_rejection(rejection("c2", 0, 1))  # its conversation was never written
    store.append_conversation(make_conversation("c1"))
    store.append_rejection(rejection("c1", 0, 1, "again"))
    assert [(r.id, r.reason) for r in store.current_rejections()] == [("c1/t0/a1", "again")]
    assert len(store.rejections().records) == 3  # the raw lines stay as written
    store.append_scores(
        [Score(conversation_id="c1", metric="m", value=0.0), Score(conversation_id="c1", metric="m", value=1.0)]
    )
    assert [s.value for s in store.current_scores()] == [1.0]


def test_a_score_of_a_superseded_conversation_line_is_stale_for_readers_and_counts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from ragdive.records import Score
    from ragdive.store import RunRecorder, RunStore
    from tests.factories import make_conversation

    store = RunStore.create(tmp_path)
    failed = make_conversation("c", turns=2).model_copy(update={"status": "error"})
    store.append_conversation(failed)
    for turn in (0, 1):
        store.append_score(Score(conversation_id="c", turn_index=turn, metric="m", value=1.0,
                                 conversation_finished=failed.finished))  # fmt: skip
    redone = make_conversation("c", turns=1).model_copy(update={"finished": failed.finished + timedelta(seconds=5)})
    store.append_conversation(redone)
    store.append_score(Score(conversation_id="c", turn_index=0, metric="m", value=0.0,
                             conversation_finished=redone.finished))  # fmt: skip
    (current,) = store.current_scores()  # turn 1 of the failed line is gone with it
    assert current.value == 0.0
    totals = RunRecorder(store).record().totals
    assert (totals.conversations, totals.turns, totals.scores) == (1, 1, 1)
