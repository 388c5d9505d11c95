"""Chat messages rendered as one completion-style prompt, for base (not instruction-tuned) models.

Measured on the packaged Gemma-3-270M (a base model whose GGUF carries no chat template, so llama.cpp falls
back to a llama-2 template): through the chat template it echoed template markers ("<</SYS>>", "[INST]") or
answered nothing in 3 of 3 probes; the plain transcript below gave a short sensible answer in 3 of 3
("Paris is the capital of France...", "2+2 = 4", "Red."). So the llamacpp backend uses this by default.
"""

from __future__ import annotations

import re

from .base import Message

SPEAKERS = {"user": "User", "assistant": "Assistant"}
TURN_STOP = "\nUser:"


def render_transcript(messages: list[Message]) -> str:
    """System text first, then `User:` / `Assistant:` turns, ending with an open `Assistant:` line."""
    parts: list[str] = []
    for message in messages:
        content = message.content.strip()
        if message.role == "system":
            parts.append(f"{content}\n")
        else:
            parts.append(f"{SPEAKERS[message.role]}: {content}")
    parts.append("Assistant:")
    return "\n".join(parts)


ROLE_MARK = re.compile(r"^<\|(system|user|assistant)\|>$", re.MULTILINE)
"""How a prompt file written as a transcript (the base prompt profile's few-shot prompts) marks its messages: a
line `<|user|>` starts a user message, and so on."""


def transcript_messages(text: str) -> list[Message]:
    """Split a rendered transcript prompt at its role marks into messages. Rendered by ``render_transcript``, the
    few-shot examples become earlier User/Assistant turns of one completion prompt; a chat backend receives them
    as ordinary few-shot messages."""
    marks = list(ROLE_MARK.finditer(text))
    if not marks or text[: marks[0].start()].strip():
        raise ValueError("a transcript prompt must start with a role mark such as <|system|>")
    messages: list[Message] = []
    for mark, end in zip(marks, [*(m.start() for m in marks[1:]), len(text)], strict=True):
        content = text[mark.end() : end].strip()
        if not content:
            raise ValueError(f"empty {mark.group(1)} message in a transcript prompt")
        messages.append(Message(role=mark.group(1), content=content))  # type: ignore[arg-type]
    return messages
