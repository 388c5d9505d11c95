from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from ragdive.analysis import RunScores, summarize_run
from ragdive.errors import JudgeError, ModelError
from ragdive.evaluation import Evaluator, Judge
from ragdive.records import Context
from ragdive.store import RunStore
from tests.factories import make_conversation

from .scripted_judge import rule_judge, scripted_judge

ALL = ["faithfulness", "context_precision", "context_recall", "correctness", "forgetfulness", "context_retention"]


def make_run(tmp_path: Path, kind: str = "dynamic", n: int = 2, turns: int = 2) -> RunStore:
    store = RunStore.create(tmp_path, kind=kind)
    for c in range(n):
        conv = make_conversation(f"conv-{c}", turns=turns, index=c)
        for i, t in enumerate(conv.turns):
            # answer contains the ground truth; contexts: [noise, ground truth] -> precision 0.5, recall 1
            conv.turns[i] = t.model_copy(
                update={
                    "answer": f"it is {t.ground_truth}",
                    "contexts": [Context(text="noise"), Context(text=f"says {t.ground_truth} and more")],
                }
            )
        store.append_conversation(conv)
    return store


async def test_evaluate_run_writes_every_item_and_resumes(tmp_path: Path) -> None:
    store = make_run(tmp_path)
    model, backend = scripted_judge()
    result = await Evaluator(Judge(model, concurrency=3), ALL).evaluate_run(store)
    assert result.written == 2 * 2 * 4 + 2 * 2 and result.unscored == 0 and result.skipped == 0
    assert result.judge_calls == len(backend.calls) == 20
    summary = {s.metric: s for s in summarize_run(RunScores.from_store(store))}
    assert summary["context_precision"].mean == pytest.approx(0.5)
    assert summary["context_recall"].mean == 1.0 and summary["correctness"].mean == 1.0
    manifest = store.read_manifest()
    assert manifest.totals.scores == 20 and manifest.models["judge"] == "scripted/judge"
    sent = sum(len(m.content.split()) for call in backend.calls for m in call.messages)
    assert manifest.totals.prompt_tokens == sent and manifest.totals.completion_tokens > 0
    assert manifest.totals.cost_usd is None  # the scripted judge's price is unknown: never counted as free

    again = await Evaluator(Judge(model), ALL).evaluate_run(store)
    assert again.written == 0 and again.skipped == 20 and len(backend.calls) == 20
    assert store.read_manifest().totals.prompt_tokens == sent
    assert len(store.scores().records) == 20


async def test_judge_failure_on_one_item_is_counted_not_averaged(tmp_path: Path) -> None:
    store = make_run(tmp_path, n=3, turns=1)
    failed_once = {"done": False}

    def flaky(messages, schema):
        if not failed_once["done"]:
            failed_once["done"] = True
            raise ModelError("judge timed out after retries")
        return rule_judge(messages, schema)

    model, _ = scripted_judge(flaky)
    result = await Evaluator(Judge(model), ["correctness"]).evaluate_run(store)
    assert result.unscored == 1
    (s,) = summarize_run(RunScores.from_store(store))
    assert s.n_scored == 2 and s.n_unscored == 1 and s.mean == 1.0  # never a 0 for the failed item
    assert sum(s.unscored_reasons.values()) == 1
    assert store.read_manifest().totals.unscored == 1


async def test_static_run_skips_multi_turn_metrics(tmp_path: Path) -> None:
    store = make_run(tmp_path, kind="static", turns=1)
    model, _ = scripted_judge()
    result = await Evaluator(Judge(model), ALL).evaluate_run(store)
    assert result.written == 2 * 4
    assert {s.metric for s in store.scores().records} == set(ALL[:4])
    assert result.notes


async def test_retry_judge_failures_supersedes_the_old_line(tmp_path: Path) -> None:
    store = make_run(tmp_path, n=2, turns=1)
    outage = {"left": 1}

    def flaky(messages, schema):
        if outage["left"]:
            outage["left"] -= 1
            raise ModelError("503")
        if schema.__name__ == "FaithfulnessVerdict":
            return {"claims": []}  # nothing to measure: unscored, but not a judge failure
        return rule_judge(messages, schema)

    model, backend = scripted_judge(flaky)
    metrics = ["correctness", "faithfulness"]
    first = await Evaluator(Judge(model, concurrency=1), metrics).evaluate_run(store)
    assert first.written == 4 and first.unscored == 3
    failed = [s for s in store.scores().records if s.details.get("judge_failed")]
    assert len(failed) == 1 and failed[0].unscored_reason.startswith("judge call failed")

    plain = await Evaluator(Judge(model), metrics).evaluate_run(store)
    assert plain.written == 0 and plain.skipped == 4

    retried = await Evaluator(Judge(model), metrics).evaluate_run(store, retry_judge_failures=True)
    assert retried.written == 1 and retried.skipped == 3  # the zero-claim answers are not asked again
    assert len(store.scores().records) == 5  # append-only: the old line stays in the file
    run = RunScores.from_store(store)
    assert len(run.scores) == 4  # ...but readers see only the latest line per item
    assert store.read_manifest().totals.scores == 4
    assert len(backend.calls) == 5


async def test_judge_calls_in_flight_are_bounded_by_concurrency(tmp_path: Path) -> None:
    import asyncio

    store = make_run(tmp_path, n=3, turns=2)
    state = {"now": 0, "peak": 0}

    async def slow(messages, schema):
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return rule_judge(messages, schema)

    model, backend = scripted_judge(slow)
    await Evaluator(Judge(model, concurrency=2), ALL).evaluate_run(store)
    assert len(backend.calls) == 3 * 2 * 4 + 3 * 2
    assert state["peak"] == 2


async def test_budget_exceeded_stops_the_evaluation_without_unscoring_the_rest(tmp_path: Path) -> None:
    from ragdive.errors import BudgetExceeded

    store = make_run(tmp_path, n=2, turns=1)
    model, backend = scripted_judge(responder=None)
    backend.enqueue({"reason": "ok", "correct": True}, BudgetExceeded("budget of 1000 tokens reached"))
    with pytest.raises(BudgetExceeded):
        await Evaluator(Judge(model, concurrency=1), ["correctness"]).evaluate_run(store)
    scores = store.scores().records
    assert [s.value for s in scores] == [1.0]  # what finished is kept; nothing became unscored
    assert store.read_manifest().totals.scores == 1


async def test_unusable_judge_answers_still_count_their_tokens() -> None:
    """A judge failure is unscored, and the tokens it burned still reach the totals (never free)."""
    from ragdive.evaluation.judge import Judge
    from ragdive.models import Model, ScriptedModel

    class Verdict(BaseModel):
        ok: bool

    judge = Judge(Model(ScriptedModel().enqueue("one two three", "four five")))
    with pytest.raises(JudgeError):
        await judge.ask("correctness", Verdict, question="q", ground_truth="g", answer="a", unanswerable=False)
    assert judge.failures == 1 and judge.usage.completion_tokens == 5


async def test_scores_of_an_older_metric_version_are_named_and_rescored_on_request(tmp_path: Path) -> None:
    store = make_run(tmp_path, n=2, turns=1)
    model, backend = scripted_judge()
    await Evaluator(Judge(model), ["correctness"]).evaluate_run(store)
    # Pretend the first conversation's verdict came from an earlier prompt: rewrite its fingerprint on disk.
    path = store.path / "evaluations.jsonl"
    lines = path.read_text().splitlines()
    lines[0] = lines[0].replace('"prompt_fingerprint":"', '"prompt_fingerprint":"old')
    path.write_text("\n".join(lines) + "\n")

    kept = await Evaluator(Judge(model), ["correctness"]).evaluate_run(store)
    assert kept.written == 0 and kept.changed == {"correctness": 1}
    assert any("another version" in note and "--rescore-changed" in note for note in kept.notes)

    calls = len(backend.calls)
    redone = await Evaluator(Judge(model), ["correctness"]).evaluate_run(store, rescore_changed=True)
    assert redone.written == 1 and redone.skipped == 1 and len(backend.calls) == calls + 1
    assert not any("another version" in note for note in redone.notes)
    again = await Evaluator(Judge(model), ["correctness"]).evaluate_run(store)
    assert again.changed == {} and again.written == 0  # the new line supersedes the old one


async def test_a_wrong_shape_judge_answer_is_a_judge_failure_never_nothing_to_measure(tmp_path: Path) -> None:
    # {"unexpected": true} used to parse as "no claims" / "no statements" and be recorded as nothing to measure
    store = make_run(tmp_path, n=1, turns=2)
    model, backend = scripted_judge(lambda messages, schema: {"unexpected": True})
    result = await Evaluator(Judge(model), ALL).evaluate_run(store)
    scores = store.scores().records
    assert result.written == len(scores) == 2 * 4 + 2 and result.unscored == len(scores)
    assert all(s.details.get("judge_failed") for s in scores), [s.unscored_reason for s in scores]

    model, _ = scripted_judge()  # a healthy judge: every failed item is asked again
    retried = await Evaluator(Judge(model), ALL).evaluate_run(store, retry_judge_failures=True)
    assert retried.written == len(scores) and retried.unscored == 0


async def test_no_statement_in_a_ground_truth_is_the_judge_failing(tmp_path: Path) -> None:
    store = make_run(tmp_path, n=1, turns=1)
    model, _ = scripted_judge(lambda messages, schema: {"statements": []})
    await Evaluator(Judge(model), ["context_recall"]).evaluate_run(store)
    (score,) = store.scores().records
    assert score.value is None and score.details.get("judge_failed")


async def test_turns_judged_early_are_written_with_their_conversation_and_then_let_go(tmp_path: Path) -> None:
    """The stream of a simulation in progress: turns first, then the conversation's line. The scores equal those of
    scoring the finished run afterwards; a conversation never written leaves none; nothing stays held."""
    import asyncio

    from ragdive.evaluation import Arrivals

    source = make_run(tmp_path / "source", n=3)
    conversations = source.current_conversations()
    store = RunStore.create(tmp_path / "live")
    model, _ = scripted_judge()
    evaluator = Evaluator(Judge(model, concurrency=2), ALL)
    arrivals = Arrivals()
    scoring = asyncio.ensure_future(evaluator.score_planned(store, evaluator.plan_run(store), incoming=arrivals))
    for conv in conversations:
        for turn in conv.turns:
            arrivals.answered(conv, turn)
            await asyncio.sleep(0)  # the judge starts on it while the conversation "goes on"
        if conv.index < 2:  # the third is dropped, as an interrupted run drops the conversation in flight
            store.append_conversation(conv)
            arrivals.written(conv)
    arrivals.close()
    result = await scoring
    assert arrivals.on_disk == {}  # let go once their scores were on disk
    live = {
        (s.conversation_id, s.turn_index, s.metric): (s.value, s.conversation_finished) for s in store.scores().records
    }
    assert result.written == len(live) == 2 * (2 * 4 + 2)
    await Evaluator(Judge(scripted_judge()[0]), ALL).evaluate_run(source)
    after = {
        (s.conversation_id, s.turn_index, s.metric): (s.value, s.conversation_finished)
        for s in source.scores().records
        if s.conversation_id != conversations[2].id
    }
    assert live == after
