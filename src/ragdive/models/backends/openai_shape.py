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
