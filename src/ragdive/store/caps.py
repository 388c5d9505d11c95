"""A size cap on the text a run stores, with a marker a reader cannot miss.

A target that answers 10 MB (a dumped file, a runaway generation) was stored whole, and again inside the judge's
reason that quoted it: run files of gigabytes, reports that do not open, prompts no judge accepts. Every string in
a record written to a run file (answers, contexts, drafts, errors, judge reasons and details) is cut to
``max_text_chars`` characters, and the cut is said in the text itself, so no one mistakes the rest for all of it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from . import line_json

DEFAULT_MAX_TEXT_CHARS = 100_000
"""Far above any real answer or passage (a long answer is a few thousand characters), far below what hurts."""


def truncation_marker(original_chars: int, kept: int) -> str:
    return f" …[truncated by ragdive: {original_chars:,} characters, the first {kept:,} kept; store.max_text_chars]"


def cap_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + truncation_marker(len(text), limit)


def _cap(value: Any, limit: int) -> tuple[Any, bool]:
    if isinstance(value, str):
        return (cap_text(value, limit), True) if len(value) > limit else (value, False)
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            out[key], cut = _cap(item, limit)
            changed |= cut
        return (out, True) if changed else (value, False)
    if isinstance(value, list):
        items = [_cap(item, limit) for item in value]
        return ([v for v, _ in items], True) if any(cut for _, cut in items) else (value, False)
    return value, False


def capped_json(record: BaseModel | dict[str, Any], limit: int | None) -> str:
    """The record as one line of JSON text, every string longer than ``limit`` cut and marked. A record's plain
    JSON values (model_dump's) are encoded by line_json; a dict given as such, by the standard library as before
    (it may hold a value that encoder refuses and line_json would not, a datetime: that still fails)."""
    if isinstance(record, BaseModel):
        data = record.model_dump(mode="json")
        encode = _record_json
    else:
        data, encode = record, _stdlib_json
    text = encode(data)
    # No string is longer than the JSON text that holds it: a record shorter than the cap (nearly all) is not walked
    if limit is not None and len(text) > limit:
        data, cut = _cap(data, limit)
        if cut:
            text = encode(data)
    return text


def _record_json(data: Any) -> str:
    return line_json.dumps(data).decode("utf-8")


def _stdlib_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
