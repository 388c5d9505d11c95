"""Reading an OpenAI-shaped chat completion (the openai SDK's and litellm's responses share this shape)."""

from __future__ import annotations

from typing import Any

from ...records import Usage
from ..base import Completion


def provider_cached_tokens(usage: Any) -> int:
    """Prompt tokens the provider served from its prompt cache, in the shapes providers report them (a dict as
    sent, or the SDK's / litellm's objects): OpenAI, Gemini's and most compatible servers'
    ``prompt_tokens_details.cached_tokens``, DeepSeek's ``prompt_cache_hit_tokens``, Anthropic's
    ``cache_read_input_tokens``. 0 when none is given."""

    def read(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    if usage is None:
        return 0
    details = read(usage, "prompt_tokens_details")
    for value in (
        read(details, "cached_tokens") if details is not None else None,
        read(usage, "prompt_cache_hit_tokens"),
        read(usage, "cache_read_input_tokens"),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def completion_from_choice(response: Any, choice: Any, name: str) -> Completion:
    usage = getattr(response, "usage", None)
    return Completion(
        text=choice.message.content or "",
        model=name,
        finish_reason=choice.finish_reason,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            provider_cached_tokens=provider_cached_tokens(usage),
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
            provider_cached_tokens=provider_cached_tokens(usage),
        ),
    )
