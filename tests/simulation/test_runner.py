from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from ragdive.config import BudgetConfig
from ragdive.corpus.sampling import SeedSampler
from ragdive.errors import BudgetExceeded, TargetError
from ragdive.models import Model, ModelContext, ScriptedModel
from ragdive.records import TargetReply
from ragdive.simulation import (
    DialogueSettings,
    Generator,
    SimulationRunner,
    Validator,
    builtin_personas,
    plan_conversations,
)
from ragdive.store import RunStore
from ragdive.targets import DialogueState, Target

from .helpers import DOCS, good_draft, session_run, user_model, validator_model

MAX_TURNS = 3


class SlowEchoTarget(Target):
    """Yields to the event loop on every answer so conversations really interleave; tracks what it saw."""

    def __init__(self, *, interrupt_after: int | None = None, cancel_after: int | None = None) -> None:
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = 0
        self.interrupt_after = interrupt_after
        self.cancel_after = cancel_after
        self.main_task: asyncio.Task[object] | None = None
        self.history_lengths: dict[str, list[int]] = {}

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt  # what Ctrl-C looks like from inside a running conversation
        if self.cancel_after is not None and self.calls > self.cancel_after and self.main_task is not None:
            self.main_task.cancel()
        self.history_lengths.setdefault(conversation.id, []).append(len(conversation.history))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0.001)
        self.in_flight -= 1
        return TargetReply(answer=f"answer to {user_message}")


def make_runner(store: RunStore, n: int, target: Target, *, user=None, validator=None) -> SimulationRunner:  # type: ignore[no-untyped-def]
    personas = [builtin_personas()[p] for p in ("precise", "attentive", "skeptical")]
    plans = plan_conversations(n, run_seed=11, personas=personas, sampler=SeedSampler(DOCS, seed=11))
    return SimulationRunner(
        store=store,
        plans=plans,
        generator=Generator(user or user_model()[0]),
        validator=Validator(validator or validator_model()[0]),
        target=target,
        settings=DialogueSettings(max_turns=MAX_TURNS),
        concurrency=8,
    )


def flaky_validator():  # type: ignore[no-untyped-def]
    """Rejects every third draft it sees, so rejections exist to be counted."""
    seen = {"n": 0}

    def respond(messages):  # type: ignore[no-untyped-def]
        seen["n"] += 1
        if seen["n"] % 3 == 0:
            return {"reason": "vague", "failed_checks": ["not_standalone"], "valid": False}
        return {"reason": "ok", "failed_checks": [], "valid": True}

    return validator_model(responder=respond)[0]


def check_store(store: RunStore, expected: int) -> None:
    conversations = store.conversations().records
    ids = [c.id for c in conversations]
    assert len(ids) == expected and len(set(ids)) == expected, Counter(ids).most_common(3)
    for conv in conversations:
        assert conv.status == "finished", conv.error
        assert [t.index for t in conv.turns] == list(range(MAX_TURNS))
    manifest = store.read_manifest()
    assert manifest.totals.conversations == expected and manifest.totals.turns == expected * MAX_TURNS
    rejections = store.rejections().records
    assert manifest.totals.rejections == len(rejections)
    # every rejection on disk belongs to a written conversation and matches one of its rejected attempts
    rejected_attempts = Counter(c.id for c in conversations for t in c.turns for a in t.attempts if not a.verdict.valid)
    assert Counter(r.conversation_id for r in rejections) == rejected_attempts


async def test_fifty_conversations_at_concurrency_eight(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    target = SlowEchoTarget()
    validator = flaky_validator()
    outcome = await session_run(make_runner(store, 50, target, validator=validator))

    assert outcome.status == "finished" and store.read_manifest().status == "finished"
    check_store(store, 50)
    assert 1 < target.max_in_flight <= 8  # conversations overlapped, never more than the bound
    # within each conversation the target saw its own history growing turn by turn: turns ran in order
    assert all(lengths == [0, 2, 4] for lengths in target.history_lengths.values())
    assert store.read_manifest().totals.rejections > 0
    assert store.read_manifest().totals.prompt_tokens > 0 and store.read_manifest().totals.cost_usd is None


def test_ctrl_c_mid_run_then_resume_gives_exactly_fifty(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(
            session_run(make_runner(store, 50, SlowEchoTarget(interrupt_after=60), validator=flaky_validator()))
        )
    manifest = store.read_manifest()
    written = len(store.conversations().records)
    assert manifest.status == "interrupted" and 0 < written < 50
    assert manifest.totals.conversations == written
    check_store(store, written)  # nothing half-done was written, no rejection of a dropped conversation
    assert manifest.totals.rejections > 0

    resumed_target = SlowEchoTarget()
    outcome = asyncio.run(
        session_run(make_runner(RunStore.open(store.path), 50, resumed_target, validator=flaky_validator()))
    )
    assert outcome.status == "finished"
    check_store(store, 50)
    assert len(resumed_target.history_lengths) == 50 - written  # finished ones were skipped, not redone


async def test_cancellation_marks_the_run_interrupted_and_resume_completes_it(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    target = SlowEchoTarget(cancel_after=40)
    task = asyncio.create_task(session_run(make_runner(store, 50, target)))
    target.main_task = task
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.read_manifest().status == "interrupted"
    written = len(store.conversations().records)
    assert written < 50
    await session_run(make_runner(RunStore.open(store.path), 50, SlowEchoTarget()))
    check_store(store, 50)


async def test_budget_exceeded_stops_cleanly(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    user, backend = user_model()
    calls = {"n": 0}
    responder = backend.responder

    def limited(messages, schema):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] > 40:
            raise BudgetExceeded("max_tokens 5000 reached")
        return responder(messages, schema)  # type: ignore[misc]

    backend.responder = limited
    outcome = await session_run(make_runner(store, 50, SlowEchoTarget(), user=user))
    manifest = store.read_manifest()
    assert outcome.status == "budget_exceeded" == manifest.status
    assert "max_tokens 5000 reached" in (manifest.error or "")
    written = len(store.conversations().records)
    assert 0 < written < 50
    check_store(store, written)  # only whole conversations were written


class PickyTarget(Target):
    def __init__(self, broken_id: str) -> None:
        self.broken_id = broken_id

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        if conversation.id == self.broken_id:
            raise RuntimeError("adapter bug")
        return TargetReply(answer="fine")


async def test_an_error_in_one_conversation_does_not_stop_the_others(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    runner = make_runner(store, 10, PickyTarget("placeholder"))
    broken = runner.plans[3].id
    runner.target = PickyTarget(broken)
    outcome = await session_run(runner)
    assert outcome.status == "finished"
    by_id = {c.id: c for c in store.conversations().records}
    assert len(by_id) == 10 and by_id[broken].status == "error" and "adapter bug" in by_id[broken].error
    assert all(c.status == "finished" for cid, c in by_id.items() if cid != broken)
    assert store.read_manifest().totals.errors == 1


def test_conversation_ids_and_seeds_are_deterministic() -> None:
    sampler = SeedSampler(DOCS, seed=5)
    personas = list(builtin_personas().values())
    a = plan_conversations(20, run_seed=5, personas=personas, sampler=sampler)
    b = plan_conversations(30, run_seed=5, personas=personas, sampler=sampler)
    c = plan_conversations(20, run_seed=6, personas=personas, sampler=sampler)
    assert [(p.id, p.seed, p.persona.name, p.documents[0].id) for p in a] == [
        (p.id, p.seed, p.persona.name, p.documents[0].id) for p in b[:20]
    ]
    assert len({p.id for p in b}) == 30 and len({p.seed for p in b}) == 30
    assert not {p.id for p in a} & {p.id for p in c}


def shared_models(max_tokens: int | None):  # type: ignore[no-untyped-def]
    """User and validator sharing one model context with a real token budget, as in a configured run."""
    context = ModelContext(budget=BudgetConfig(max_tokens=max_tokens))
    user = Model(ScriptedModel("scripted/user", responder=good_draft), role="user", context=context)
    validator = Model(
        ScriptedModel("scripted/v", responder=lambda m: {"reason": "ok", "failed_checks": [], "valid": True}),
        role="validator",
        context=context,
    )
    return user, validator, context


async def test_the_token_budget_caps_the_whole_run_across_resumes(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    user, validator, context = shared_models(max_tokens=45_000)
    outcome = await session_run(make_runner(store, 50, SlowEchoTarget(), user=user, validator=validator))
    manifest = store.read_manifest()
    assert outcome.status == "budget_exceeded" == manifest.status and "45000" in manifest.error
    written = manifest.totals.conversations
    assert 0 < written < 50
    check_store(store, written)
    # the manifest counts every call the models made (the ledger), dropped conversations included
    spent = manifest.totals.prompt_tokens + manifest.totals.completion_tokens
    assert spent == context.ledger.total_tokens >= 45_000
    assert manifest.totals.cost_usd is None  # scripted models have no price: unknown, not free

    # resuming with the same budget: it is already spent, nothing new is written
    user, validator, _ = shared_models(max_tokens=45_000)
    outcome = await session_run(
        make_runner(RunStore.open(store.path), 50, SlowEchoTarget(), user=user, validator=validator)
    )
    assert outcome.status == "budget_exceeded" and store.read_manifest().totals.conversations == written

    # with more budget the run completes, and the tokens of both sessions add up
    user, validator, context = shared_models(max_tokens=None)
    outcome = await session_run(
        make_runner(RunStore.open(store.path), 50, SlowEchoTarget(), user=user, validator=validator)
    )
    assert outcome.status == "finished"
    check_store(store, 50)
    totals = store.read_manifest().totals
    this_session = context.ledger.total()
    assert (
        totals.prompt_tokens + totals.completion_tokens
        == spent + this_session.prompt_tokens + this_session.completion_tokens
    )
    assert context.ledger.total_tokens == spent + this_session.prompt_tokens + this_session.completion_tokens


class DownTarget(Target):
    """A target that is down, or down for some conversations only."""

    def __init__(self, answer_for: set[str] | None = None) -> None:
        self.answer_for = answer_for or set()
        self.calls = 0

    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        self.calls += 1
        if conversation.id in self.answer_for:
            return TargetReply(answer="fine")
        raise TargetError("POST http://127.0.0.1:9/chat failed: connection refused")


async def test_a_target_that_never_answers_stops_the_run_with_one_clear_error(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    target = DownTarget()
    runner = make_runner(store, 40, target)
    with pytest.raises(TargetError, match="failed 3 times and never answered.*connection refused"):
        await session_run(runner)
    manifest = store.read_manifest()
    assert manifest.status == "failed" and "never answered" in (manifest.error or "")
    written = store.conversations().records
    # it stopped after a handful, not after spending the models on all 40; what finished is on disk
    assert 3 <= len(written) < 40 and target.calls < 40
    assert all(c.turns[0].error and "connection refused" in c.turns[0].error for c in written)


async def test_a_target_that_answers_sometimes_is_flaky_not_down(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, seed=11)
    runner = make_runner(store, 12, DownTarget())
    runner.target = DownTarget(answer_for={runner.plans[0].id})
    runner.concurrency = 1  # the answering conversation runs first
    outcome = await session_run(runner)
    assert outcome.status == "finished"
    assert len(store.conversations().records) == 12 and store.read_manifest().totals.errors == 11
