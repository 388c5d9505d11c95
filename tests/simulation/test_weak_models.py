"""Weak model output (the packaged base Gemma-270M under a JSON grammar writes valid JSON with poor content, or
runs out of tokens mid-object) must become rejections and failed attempts, never a crash."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ragdive.corpus.sampling import SeedSampler
from ragdive.simulation import DialogueSettings, Generator, SimulationRunner, Validator, plan_conversations
from ragdive.simulation.personas import builtin_personas
from ragdive.store import RunStore

from .helpers import DOCS, EchoTarget, good_draft, user_model, validator_model


def weak_user(rng: random.Random):  # type: ignore[no-untyped-def]
    def respond(messages, schema):  # type: ignore[no-untyped-def]
        choice = rng.randrange(7)
        if choice == 0:
            return '{"question_type": "initial", "evidence": ["The old harb'  # cut off by max_tokens
        if choice == 1:
            return {
                "question_type": "initial",
                "evidence": [],
                "ground_truth": "",
                "standalone_question": "",
                "rag_input": "",
                "refers_to_turn": None,
            }
        if choice == 2:
            return {
                "question_type": "comparative",
                "evidence": ["the the the the the the the"],
                "ground_truth": "the",
                "standalone_question": "the document?",
                "rag_input": "the document?",
                "refers_to_turn": -4,
            }
        if choice == 3:
            return {"question_type": "nonsense", "evidence": "x"}
        if choice == 4:
            return {**good_draft(messages), "refers_to_turn": 99}
        return good_draft(messages)

    return respond


def weak_validator(rng: random.Random):  # type: ignore[no-untyped-def]
    def respond(messages):  # type: ignore[no-untyped-def]
        choice = rng.randrange(4)
        if choice == 0:
            return '{"reason": "The draft'
        if choice == 1:
            return {"reason": "", "failed_checks": ["wrong_type", "wrong_type"], "valid": True}
        return {"reason": "ok", "failed_checks": [], "valid": rng.random() < 0.6}

    return respond


@pytest.mark.parametrize("on_exhausted", ["accept", "end"])
async def test_weak_output_never_crashes_a_run(tmp_path: Path, on_exhausted: str) -> None:
    rng = random.Random(on_exhausted)
    user, _ = user_model(weak_user(rng))
    validator, _ = validator_model(responder=weak_validator(rng))
    store = RunStore.create(tmp_path, seed=1)
    plans = plan_conversations(
        12, run_seed=1, personas=list(builtin_personas().values()), sampler=SeedSampler(DOCS, seed=1)
    )
    runner = SimulationRunner(
        store=store,
        plans=plans,
        generator=Generator(user),
        validator=Validator(validator),
        target=EchoTarget(),
        settings=DialogueSettings(max_turns=4, max_attempts=3, on_exhausted=on_exhausted),
        concurrency=4,
    )
    outcome = await runner.run()
    conversations = store.conversations().records
    assert outcome.status == "finished" and len(conversations) == 12
    assert all(c.status in ("finished", "ended_early") for c in conversations), [c.error for c in conversations]
    turns = [t for c in conversations for t in c.turns]
    assert store.rejections().records
    # unreadable drafts were counted as failed attempts: on kept turns, or in the reason a conversation ended
    assert any(t.generation_errors for t in turns) or any(
        "unreadable draft" in (c.end_reason or "") for c in conversations
    )
    for turn in turns:
        assert len(turn.attempts) + len(turn.generation_errors) <= 3
        assert turn.validator_overruled == (not turn.attempts[-1].verdict.valid)
    if on_exhausted == "end":
        assert not any(t.validator_overruled for t in turns)
        assert any(c.status == "ended_early" for c in conversations)
