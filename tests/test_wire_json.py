"""wire_json: orjson where it writes the standard library's bytes (cache keys) or where a difference is harmless,
the standard library wherever orjson refuses a value."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from ragdive import wire_json
from ragdive.models import Message
from ragdive.models.base import GenerateParams
from ragdive.models.cache import SCHEMA_VERSION, cache_key


def _stdlib(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def test_string_lists_are_the_standard_librarys_bytes_for_every_code_point() -> None:
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    rows = [["".join(points[i : i + 4096]), f'"\\{i}\n'] for i in range(0, len(points), 4096)]
    assert wire_json.string_list_json(rows) == _stdlib(rows)
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate fails as it did with the standard library
        wire_json.string_list_json([["\ud800"]])


def test_cache_keys_are_the_sha256_of_the_standard_librarys_json() -> None:
    """The keys of entries stored before wire_json still match: the same bytes are hashed."""
    messages = [Message(role="system", content='Ünïcode \u2028 \x00\x1f "q" \\ \n'), Message(role="user", content="é")]
    params = GenerateParams(temperature=1e-05, max_tokens=7, stop=["\n"], top_p=0.9)
    for base_url, schema, repeat in ((None, None, 0), ("http://h/v1", '{"type":"object"}', 3)):
        payload = {
            "v": SCHEMA_VERSION,
            "model": "openai/m",
            "base_url": base_url or "",
            "messages": [[m.role, m.content] for m in messages],
            "schema": schema,
            "params": params.model_dump(exclude_none=True),
            "repeat": repeat,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        expected = hashlib.sha256(text.encode("utf-8")).hexdigest()
        key = cache_key(
            model="openai/m", base_url=base_url, messages=messages, schema=schema, params=params, repeat_index=repeat
        )
        assert key == expected


def test_what_orjson_refuses_is_left_to_the_standard_library() -> None:
    big = {"n": 2**70, 1: "non-string key"}
    assert json.loads(wire_json.dumps(big)) == {"n": 2**70, "1": "non-string key"}
    assert math.isnan(wire_json.loads(b'{"x": NaN}')["x"])  # the standard library reads it; orjson does not
    assert wire_json.loads('{"text": "\u00e9"}'.encode("utf-16"))["text"] == "é"  # not UTF-8: the stdlib
    with pytest.raises(ValueError):
        wire_json.loads(b"<html>a proxy's page</html>")
