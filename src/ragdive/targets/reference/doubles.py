"""Deterministic responders for a `scripted/...` generator: test doubles, not a RAG answer.

They let a served reference RAG run without any LLM (tests, demos of the plumbing). Select one from YAML::

    models:
      target: {model: scripted/echo, options: {responder: "ragdive.targets.reference.doubles:echo_messages"}}
"""

from __future__ import annotations

from ...models import Message


def echo_messages(messages: list[Message]) -> str:
    """Every message the generator received, as `role: content` blocks: lets a test over HTTP check exactly what
    the generator was shown (history policy, passages, question)."""
    return "\n---\n".join(f"{m.role}: {m.content}" for m in messages)


def first_passage(messages: list[Message]) -> str:
    """The first retrieved passage, as an extractive "answer"."""
    text = messages[-1].content
    start = text.find("[1] ")
    if start < 0:
        return "the knowledge base does not say"
    end = text.find("\n[2] ", start)
    end = text.find("\nQuestion:", start) if end < 0 else end
    return text[start + 4 : end].strip()
