"""JSON on the per-request path (request bodies, replies, cache keys), on orjson: every model call encodes its
messages twice (the request and the cache key) and decodes one reply, ~6 us each for a few KB with the standard
library against ~0.5 us (issue 27: CPU per request).

orjson is used only where its output is the standard library's or where the difference is harmless, and the
standard library takes over wherever orjson refuses a value, so nothing that worked stops working:

- ``dumps``: a request body. orjson writes compact JSON (no spaces after ``,`` and ``:``) and a NaN float as
  ``null`` (the standard library writes ``NaN``, which no JSON parser has to accept); a value orjson cannot encode
  (an integer beyond 64 bits, an unknown type) is encoded by ``json.dumps``.
- ``loads``: a reply. What orjson refuses (``NaN``, text that is not UTF-8) is parsed by ``json.loads``, which
  raises its usual ``ValueError`` if it is not JSON at all. One difference stays: orjson reads an integer beyond 64
  bits as a float, where the standard library keeps it exact; nothing ragdive reads from a reply (token counts)
  comes near that.
- ``string_list_json``: a string or lists of strings, byte for byte what ``json.dumps(..., ensure_ascii=False,
  separators=(",", ":"))`` writes (checked over every code point in tests/test_wire_json.py): the cache keys of
  entries already stored still match.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    """``value`` as UTF-8 JSON (see the module's note)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # orjson.JSONEncodeError: the standard library encodes what orjson does not
        return json.dumps(value, ensure_ascii=False).encode("utf-8")


def loads(data: bytes | str) -> Any:
    """Parse JSON (see the module's note); ``ValueError`` when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def string_list_json(rows: str | list[str] | list[list[str]]) -> bytes:
    """A string, or lists of strings, as compact UTF-8 JSON: the standard library's exact bytes
    (``ensure_ascii=False``)."""
    try:
        return orjson.dumps(rows)
    except TypeError:  # e.g. a lone surrogate: the standard library's own error (or bytes), as before
        return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
