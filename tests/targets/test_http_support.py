from __future__ import annotations

import json

import pytest

from ragdive.errors import TargetError
from ragdive.targets.http_support import compile_path, read_answer, read_contexts, render_template, search

VALUES = {
    "message": 'say "hi"\n{not a placeholder}',
    "history": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
    "conversation_id": "c-1",
    "session_id": "t-9",
}


def test_placeholders_are_substituted_structurally() -> None:
    template = {
        "input": {"text": "{message}", "thread": "{session_id}"},
        "messages": "{history}",
        "meta": ["{conversation_id}", 3, None, True],
        "note": "conversation {conversation_id}: {message}",
        "raw": "{unknown} and {history}!",
    }
    body = render_template(template, VALUES)
    assert body["input"] == {"text": VALUES["message"], "thread": "t-9"}
    assert body["messages"] == VALUES["history"]  # a list, not a string
    assert body["meta"] == ["c-1", 3, None, True]
    assert body["note"] == f"conversation c-1: {VALUES['message']}"
    assert body["raw"] == "{unknown} and " + json.dumps(VALUES["history"]) + "!"
    # the result is plain data: serialising it gives valid JSON with the quotes and newline escaped
    assert json.loads(json.dumps(body)) == body
    assert template["messages"] == "{history}"  # the template is not modified


def test_contexts_in_the_shapes_systems_return() -> None:
    contexts = read_contexts(
        [
            "plain",
            {"text": "t", "id": 7, "source": "a.md", "score": 0.5},
            {"page_content": "lc", "metadata": {"source": "b.md", "id": "x"}},
            {"content": "c"},
        ]
    )
    assert [c.text for c in contexts] == ["plain", "t", "lc", "c"]
    assert contexts[1].id == "7" and contexts[1].score == 0.5 and contexts[2].source == "b.md"
    assert read_contexts(None) == []


@pytest.mark.parametrize("bad", ["a string", [3], [{"title": "no text"}]])
def test_unreadable_contexts_are_target_errors(bad: object) -> None:
    with pytest.raises(TargetError):
        read_contexts(bad)


def test_reading_a_reply_leaves_nothing_for_the_collector() -> None:
    """Every turn reads its answer and contexts by JMESPath: the search leaves no reference cycle behind (a compiled
    path's own search made an interpreter per call, each a cycle: two a turn for the collector to walk and free)."""
    import gc

    answer = compile_path("choices[0].message.content", "answer path")
    contexts = compile_path("contexts", "contexts path")
    reply = {"choices": [{"message": {"content": "hi"}}], "contexts": [{"text": "a"}]}
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            assert read_answer(answer, reply, "choices[0].message.content") == "hi"
            assert search(contexts, reply, "contexts path", reply) == [{"text": "a"}]
        assert gc.collect() == 0
    finally:
        gc.enable()
