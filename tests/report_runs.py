"""Scripted runs for the HTML report's tests and benchmark: known personas, question types, scores, rejections,
and a hostile target answer that must stay text."""

from __future__ import annotations

from pathlib import Path

from ragdive.records import Rejection, Score, Totals
from ragdive.store import RunStore
from tests.factories import make_conversation, make_draft

HOSTILE = "<script>alert(1)</script> and <img src=x onerror=alert(1)> & more"
PERSONAS = ("curious", "precise")
LATER_TYPES = ("follow-up", "clarification", "follow-up", "comparative", "correction")


def write_scripted_run(root: Path, conversations: int = 4, turns: int = 3, documents: int | None = None) -> RunStore:
    """A finished run: conversation i has persona PERSONAS[i % 2]; turn 1 is `initial`, later turns cycle through
    LATER_TYPES shifted by i; correctness is scored per turn (unscored at turn 2 of every third conversation);
    forgetfulness per conversation; conversation 0's first answer is HOSTILE.

    Each conversation has its own seed document, unless ``documents`` is given: then conversation i's is
    doc-(i % documents), so conversations share documents (repeats for uniqueness), all asking the same questions
    but at their last turn, where each asks its own."""
    store = RunStore.create(
        root,
        run_id="20260101-000000-report",
        name="report-test",
        status="finished",
        config={"corpus": {"path": "corpus/docs"}},
        models={"user": "scripted/user", "validator": "scripted/validator", "judge": "scripted/judge"},
        target="python: tests.echo",
        seed=7,
        totals=Totals(conversations=conversations, turns=conversations * turns, prompt_tokens=1234, cost_usd=0.5),
    )
    for i in range(conversations):
        c = make_conversation(f"conv-{i}", turns=turns, index=i)
        c.persona = PERSONAS[i % 2]
        c.document_ids = [f"doc-{i}"]  # no repeats: uniqueness has nothing to compare, no embedder loads
        if documents:
            c.document_ids = [f"doc-{i % documents}"]
            c.turns[-1].standalone_question = f"the last question of conversation {i}?"
        for t in c.turns[1:]:
            t.question_type = LATER_TYPES[(t.index + i) % len(LATER_TYPES)]  # type: ignore[assignment]
        if i == 0:
            c.turns[0].answer = HOSTILE
        if i % 2 == 1 and turns > 1:
            store.append_rejection(
                Rejection(
                    conversation_id=c.id,
                    turn_index=1,
                    attempt=1,
                    categories=["not_standalone"],
                    reason="uses 'it'",
                    draft=make_draft(1),
                )
            )
        store.append_conversation(c)
        for t in range(turns):
            if i % 3 == 0 and t == 1:
                store.append_score(
                    Score.unscored(conversation_id=c.id, turn_index=t, metric="correctness", reason="judge failed")
                )
            else:
                value = round(1.0 - 0.1 * t - 0.05 * (i % 4), 3)
                store.append_score(
                    Score(conversation_id=c.id, turn_index=t, metric="correctness", value=value, reason=f"r{i}.{t}")
                )
        lost = [{"turn": turns - 1, "refers_to_turn": 0, "information": "the year"}] if i % 2 == 0 else []
        store.append_score(
            Score(conversation_id=c.id, metric="forgetfulness", value=1.0 if lost else 0.0, details={"lost": lost})
        )
    return store
