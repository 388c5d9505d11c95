"""The run recorder (ragdive.store.recorder): the only writer of a run's status and totals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragdive.records import FailedCheck, ModelSpend, Rejection, Score
from ragdive.store import CONVERSATIONS, RunRecorder, RunStore, count_files
from ragdive.store import counts as counts_module

from .factories import make_conversation, make_draft


def rejection(cid: str, attempt: int, *checks: FailedCheck) -> Rejection:
    return Rejection(
        conversation_id=cid, turn_index=0, attempt=attempt, categories=list(checks), reason="no", draft=make_draft()
    )


def spend(role: str, calls: int, tokens: int, cost: float | None = 0.0) -> ModelSpend:
    return ModelSpend(
        role=role, model=f"x/{role}", calls=calls, prompt_tokens=tokens, completion_tokens=1, cost_usd=cost
    )


def test_status_goes_created_running_finished_stamped_with_this_process(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    assert store.read_manifest().status == "created"
    store._write_manifest(store.read_manifest().model_copy(update={"error": "an earlier session failed"}))
    started = RunRecorder(store).start()
    assert started.status == "running" and started.error is None
    assert started.process is not None and started.process.pid == os.getpid()
    ended = RunRecorder(store).finish("failed", "TargetError: down")
    assert (ended.status, ended.error) == ("failed", "TargetError: down")
    assert RunRecorder(store).finish("finished").error is None


def test_counts_are_what_the_files_hold_one_line_per_id(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    recorder = RunRecorder(store)
    store.append_rejection(rejection("c1", 1, FailedCheck.NOT_STANDALONE, FailedCheck.WRONG_TYPE))
    store.append_rejection(rejection("c2", 1, FailedCheck.WRONG_TYPE))  # c2 never written: dropped by a kill
    store.append_conversation(make_conversation("c1", turns=3))
    store.append_rejection(rejection("c1", 1, FailedCheck.NOT_STANDALONE, FailedCheck.WRONG_TYPE))  # again, same id
    store.append_score(Score.unscored(conversation_id="c1", turn_index=0, metric="faithfulness", reason="failed"))
    store.append_score(Score(conversation_id="c1", turn_index=0, metric="faithfulness", value=1.0))  # retried
    t = recorder.record().totals
    assert (t.conversations, t.turns, t.rejections, t.scores, t.unscored) == (1, 3, 1, 1, 0)
    assert t.rejections_by_category == {"not_standalone": 1, "wrong_type": 1}

    # the same recorder reads only what was appended since; a fresh count of the files agrees
    store.append_conversation(make_conversation("c2", turns=2, index=1))
    t = recorder.record().totals
    assert (t.conversations, t.turns, t.rejections) == (2, 5, 2)
    assert t.rejections_by_category == {"not_standalone": 1, "wrong_type": 2}
    fresh = count_files(store.path)
    counts = ("conversations", "turns", "errors", "rejections", "rejections_by_category", "scores", "unscored")
    assert fresh.model_dump(include=set(counts)) == t.model_dump(include=set(counts))


def test_the_recorders_of_one_store_read_each_line_once_and_count_what_the_files_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's simulation and evaluation each have a recorder: they share one counter, so a line is parsed once,
    not once per recorder; a recorder on another RunStore of the same folder counts the files afresh."""
    parsed: list[int] = []
    real = counts_module.read_jsonl_tail

    def counting(*args: object, **kwargs: object) -> object:
        records, offset = real(*args, **kwargs)  # type: ignore[arg-type]
        parsed.append(len(records))
        return records, offset

    monkeypatch.setattr(counts_module, "read_jsonl_tail", counting)
    store = RunStore.create(tmp_path)
    simulation, evaluation = RunRecorder(store), RunRecorder(store)
    store.append_conversation(make_conversation("c1", turns=3))
    store.append_score(Score(conversation_id="c1", turn_index=0, metric="faithfulness", value=1.0))
    simulation.record()
    store.append_conversation(make_conversation("c2", turns=2, index=1))
    store.append_score(Score.unscored(conversation_id="c2", turn_index=0, metric="faithfulness", reason="failed"))
    t = evaluation.record().totals
    assert (t.conversations, t.turns, t.scores, t.unscored) == (2, 5, 2, 1)
    assert simulation.record().totals == t
    assert sum(parsed) == 4  # every line once, though two recorders counted
    gaps = simulation.completeness()
    assert (gaps.conversations, gaps.items, gaps.judge_failed) == (2, 2, 0)  # "failed": not the judge's failure
    assert sum(parsed) == 4

    parsed.clear()
    again = RunRecorder(RunStore(store.path)).record().totals
    assert sum(parsed) == 4  # another store object: its own counter, read from the start
    counts = ("conversations", "turns", "errors", "rejections", "rejections_by_category", "scores", "unscored")
    assert again.model_dump(include=set(counts)) == count_files(store.path).model_dump(include=set(counts))
    assert again.model_dump(include=set(counts)) == t.model_dump(include=set(counts))


def test_a_torn_last_line_is_left_for_later_and_then_skipped(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    recorder = RunRecorder(store)
    store.append_conversation(make_conversation("c1"))
    with open(store.path / CONVERSATIONS, "a") as fh:
        fh.write('{"id": "c2", "pers')  # a kill mid-write
    assert recorder.record().totals.conversations == 1
    store.append_conversation(make_conversation("c3", index=2))  # starts on a fresh line
    assert recorder.record().totals.conversations == 2 == len(store.conversations().records)


def test_spend_adds_up_per_role_and_model_across_recorders_and_sessions(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    simulation = RunRecorder(store)
    simulation.start(spend=[])
    simulation.record(spend=[spend("user", 1, 10)])
    simulation.record(spend=[spend("user", 2, 25), spend("validator", 1, 5)])  # running snapshots, not deltas
    judge = RunRecorder(store)
    judge.record(spend=[spend("judge", 3, 100)], models={"judge": "x/judge"})
    simulation.finish("finished", spend=[spend("user", 2, 25), spend("validator", 1, 5)])  # nothing new
    t = store.read_manifest().totals
    assert {(s.role, s.calls, s.prompt_tokens) for s in t.spend} == {
        ("judge", 3, 100),
        ("user", 2, 25),
        ("validator", 1, 5),
    }
    assert (t.prompt_tokens, t.completion_tokens, t.cost_usd) == (130, 3, 0.0)
    assert store.read_manifest().models["judge"] == "x/judge"

    resumed = RunRecorder(store)  # a later session: its ledger starts from zero again
    t = resumed.start(spend=[spend("user", 1, 7, cost=None)]).totals
    user = next(s for s in t.spend if s.role == "user")
    assert (user.calls, user.prompt_tokens, user.cost_usd) == (3, 32, None)
    assert t.prompt_tokens == 137 and t.cost_usd is None  # one unknown price: the total is unknown, not free


def test_no_other_code_changes_status_or_totals(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    with pytest.raises(TypeError, match="only the run recorder"):
        store.update_manifest(status="finished")
    with pytest.raises(TypeError, match="totals"):
        store.update_manifest(totals={"conversations": 3})


def test_the_counts_slim_records_read_the_fields_the_records_have() -> None:
    """The counts read each line into a slim record of the fields they need: every such field is a field of the
    real record, with the same default (a renamed or re-defaulted field would count wrong without failing)."""
    from pydantic_core import PydanticUndefined

    from ragdive.records import Conversation, Rejection, Score, Turn
    from ragdive.store import counts, run

    pairs = [
        (counts._ConversationCount, Conversation),
        (counts._TurnCount, Turn),
        (counts._RejectionCount, Rejection),
        (counts._ScoreCount, Score),
        (run._ConversationHead, Conversation),
    ]
    for slim, full in pairs:
        for name, field in slim.model_fields.items():
            name = getattr(slim, "DERIVED", {}).get(name, name)  # judge_failed is read from details
            assert name in full.model_fields, (slim.__name__, name)
            real = full.model_fields[name]
            if field.default is not PydanticUndefined:
                assert real.default == field.default or real.default_factory is not None, (slim.__name__, name)


def test_tokens_served_from_the_providers_prompt_cache_are_added_like_the_other_spend(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    recorder = RunRecorder(store)

    def line(calls: int, cached: int) -> ModelSpend:
        return ModelSpend(
            role="user", model="openai/m", calls=calls, prompt_tokens=100 * calls, provider_cached_tokens=cached
        )

    recorder.record(spend=[line(1, 0)])
    recorder.record(spend=[line(3, 150)])  # a running snapshot: only what grew since is added
    RunRecorder(store).record(spend=[line(1, 60)])  # another recorder of the run (a later session)
    (spent,) = store.read_manifest().totals.spend
    assert (spent.calls, spent.prompt_tokens, spent.provider_cached_tokens) == (4, 400, 210)


def test_the_judges_spend_carries_the_tokens_its_provider_served_from_cache(tmp_path: Path) -> None:
    from ragdive.evaluation.evaluator import record_scoring
    from ragdive.records import Usage

    store = RunStore.create(tmp_path)
    used = Usage(prompt_tokens=300, completion_tokens=20, cost_usd=None, provider_cached_tokens=120)
    record_scoring(store, "openai/judge", True, used, calls=3)
    (spent,) = store.read_manifest().totals.spend
    assert (spent.role, spent.prompt_tokens, spent.provider_cached_tokens) == ("judge", 300, 120)
