"""A run's turns and conversations as DeepEval test cases (JSON): an ``LLMTestCase`` per answered turn and a
``ConversationalTestCase`` per conversation, in the field names of deepeval 4 (``deepeval.test_case``).

Each case's ``metadata["ragdive"]`` carries the ids and the scores (``scores``: metric → value or null;
``unscored``: metric → reason), so a case can be traced back to its run and ``ragdive import deepeval`` reads the
scores back. The stand-alone question is the single-turn input: it is what the turn's single-turn metrics judge.
"""

from __future__ import annotations

from typing import Any

from ..records import Conversation, Score


def _scores(scores: list[Score]) -> dict[str, Any]:
    return {
        "scores": {s.metric: s.value for s in scores},
        "unscored": {s.metric: s.unscored_reason for s in scores if not s.scored},
    }


def deepeval_cases(
    run_id: str, conversation: Conversation, scores: list[Score]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The conversation's ``LLMTestCase`` fields (one per answered turn) and its ``ConversationalTestCase``.
    ``scores``: this conversation's (others are ignored; the exporter hands each conversation its own)."""
    mine = [s for s in scores if s.conversation_id == conversation.id]
    singles = []
    for turn in conversation.turns:
        if turn.answer is None:
            continue
        turn_scores = [s for s in mine if s.turn_index == turn.index]
        singles.append(
            {
                "input": turn.standalone_question,
                "actual_output": turn.answer,
                "expected_output": turn.ground_truth,
                "retrieval_context": [c.text for c in turn.contexts],
                "name": f"{conversation.id}/t{turn.index + 1}",
                "metadata": {
                    "ragdive": {
                        "run_id": run_id,
                        "conversation_id": conversation.id,
                        "turn": turn.index + 1,
                        "rag_input": turn.rag_input,
                        "question_type": str(turn.question_type),
                        "persona": conversation.persona,
                        "document_ids": conversation.document_ids,
                        **_scores(turn_scores),
                    }
                },
            }
        )
    turns: list[dict[str, Any]] = []
    for turn in conversation.turns:
        turns.append({"role": "user", "content": turn.rag_input})
        if turn.answer is not None:
            turns.append(
                {"role": "assistant", "content": turn.answer, "retrieval_context": [c.text for c in turn.contexts]}
            )
    whole = {
        "turns": turns,
        "name": conversation.id,
        "metadata": {
            "ragdive": {
                "run_id": run_id,
                "conversation_id": conversation.id,
                "persona": conversation.persona,
                "document_ids": conversation.document_ids,
                "ground_truths": [t.ground_truth for t in conversation.turns],
                **_scores([s for s in mine if s.turn_index is None]),
            }
        },
    }
    return singles, whole
