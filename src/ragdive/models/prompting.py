"""Chat messages rendered as one completion-style prompt, for base (not instruction-tuned) models.

Measured on the packaged Gemma-3-270M (a base model whose GGUF carries no chat template, so llama.cpp falls
back to a llama-2 template): through the chat template it echoed template markers ("<</SYS>>", "[INST]") or
answered nothing in 3 of 3 probes; the plain transcript below gave a short sensible answer in 3 of 3
("Paris is the capital of France...", "2+2 = 4", "Red."). So the llamacpp backend uses this by default.
"""

from __future__ import annotations

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
