"""Small builders for records used across tests."""

from __future__ import annotations

from ragdive.records import Attempt, Context, Conversation, Turn, TurnDraft, Verdict


def make_draft(i: int = 0, **kw: object) -> TurnDraft:
    data: dict[str, object] = {
        "rag_input": f"question {i}?",
        "standalone_question": f"standalone question {i}?",
        "ground_truth": f"answer {i}",
        "question_type": "initial" if i == 0 else "follow-up",
        "evidence": [f"quote {i}"],
    }
    data.update(kw)
    return TurnDraft.model_validate(data)


def make_turn(i: int = 0) -> Turn:
    draft = make_draft(i)
    return Turn(
        index=i,
        **draft.model_dump(),
        attempts=[Attempt(draft=draft, verdict=Verdict(valid=True, reason="ok"))],
        answer=f"reply {i}",
        contexts=[Context(text=f"ctx {i}", id=f"c{i}", source="doc-1", score=0.5)],
        latency_s=0.01,
    )


def make_conversation(cid: str = "conv-0", turns: int = 2, index: int = 0) -> Conversation:
    return Conversation(
        id=cid,
        index=index,
        persona="precise",
        document_ids=["doc-1"],
        seed=123,
        turns=[make_turn(i) for i in range(turns)],
    )
