"""Reading an OpenAI-shaped chat completion (the openai SDK's and litellm's responses share this shape)."""

from __future__ import annotations

from typing import Any

from ...records import Usage
from ..base import Completion


def completion_from_choice(response: Any, choice: Any, name: str) -> Completion:
    usage = getattr(response, "usage", None)
    return Completion(
        text=choice.message.content or "",
        model=name,
        finish_reason=choice.finish_reason,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        ),
    )


def completion_from_json(data: Any, name: str) -> Completion:
    """A chat completion as the JSON the server sent; ValueError when it is not one (no choices, no message)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("no choices in the reply")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ValueError("no message in the first choice")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"the message content is a {type(content).__name__}, not text")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(
        text=content or "",
        model=name,
        finish_reason=choice.get("finish_reason"),
        usage=Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        ),
    )
