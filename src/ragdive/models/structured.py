"""Structured output: validate a model's text against a pydantic schema, leniently repair common damage, and
phrase the one corrective retry.

Repair covers what models really do: a ```json fence around the answer, prose before or after the object, and
trailing commas. Anything worse gets one retry that shows the model what was wrong, then a ModelOutputError that
keeps the raw text (callers decide: a judge records "unscored", never 0).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ModelOutputError
from .base import Message

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model (computed once per class: it is on every call's path)."""
    return schema.model_json_schema()


@lru_cache(maxsize=256)
def schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(schema_json(schema), sort_keys=True, separators=(",", ":"))


def schema_instruction(schema: type[BaseModel]) -> str:
    """A prompt line for servers without native structured output (also satisfies JSON mode's "say JSON")."""
    return "Reply with only a JSON object (no prose, no code fence) that matches this JSON schema:\n" + json.dumps(
        schema_json(schema), separators=(",", ":")
    )


def parse_structured(text: str, schema: type[T], *, model: str = "") -> T:
    """Validate ``text`` as ``schema``; on failure try the lenient repair; else ModelOutputError(raw=text)."""
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        first_error: Exception = exc
    repaired = repair_json(text)
    if repaired is not None and repaired != text:
        try:
            return schema.model_validate_json(repaired)
        except ValidationError as exc:
            first_error = exc
    provider = model.split("/", 1)[0] if "/" in model else None
    raise ModelOutputError(
        f"{model or 'model'} did not return a valid {schema.__name__}: {_short(first_error)}",
        raw=text,
        model=model or None,
        provider=provider,
    )


def repair_json(text: str) -> str | None:
    """Best-effort cleanup: unwrap a code fence, cut the first balanced JSON value out of surrounding text, and
    drop trailing commas. Returns None when no JSON value is found at all."""
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    extracted = _first_json_value(candidate)
    if extracted is None:
        return None
    return _drop_trailing_commas(extracted)


def corrective_messages(messages: list[Message], raw: str, error: ModelOutputError) -> list[Message]:
    """The conversation plus the bad answer and what was wrong with it, for the single corrective retry."""
    reason = str(error).split(": ", 1)[-1]
    return [
        *messages,
        Message(role="assistant", content=raw[:4000]),
        Message(
            role="user",
            content=(
                f"That answer could not be used: {reason}\n"
                "Reply again with only the corrected JSON object, nothing else."
            ),
        ),
    ]


def _first_json_value(text: str) -> str | None:
    """The first balanced {...} or [...] in ``text`` (string-aware), or None."""
    start = next((i for i, ch in enumerate(text) if ch in "{["), None)
    if start is None:
        return None
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]  # unbalanced: let validation report it


def _drop_trailing_commas(text: str) -> str:
    out: list[str] = []
    in_string, escaped = False, False
    for i, ch in enumerate(text):
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == ",":
            rest = text[i + 1 :].lstrip()
            if rest[:1] in ("}", "]"):
                continue
        out.append(ch)
    return "".join(out)


def _short(exc: Exception, limit: int = 300) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:3]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
            parts.append(f"{loc}: {err.get('msg')}")
        text = "; ".join(parts)
    else:
        text = str(exc)
    return text if len(text) <= limit else text[: limit - 3] + "..."
