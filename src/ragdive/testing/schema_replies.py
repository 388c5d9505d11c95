"""Plausible structured answers for any tool's judge prompts, as the stub server's ``reply`` hook: the JSON schema is
read from the request (``response_format``, as ragdive's openai backend sends it, or inside the prompt, as
instructor's JSON mode used by Ragas puts it) and answered with a small instance of it. Lists get two items, so
multi-step metrics take every step; ragdive's batched context-precision request gets one verdict per rank. Counts
the chat requests and the characters a model would read, so benchmarks/judge_calls.py and the Ragas engine's test
count another library's calls honestly on the one stub (ragdive.testing.StubServer)."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any


def find_schema(texts: list[str]) -> dict[str, Any] | None:
    """The first JSON object with ``properties`` written inside one of ``texts``."""
    decoder = json.JSONDecoder()
    for text in texts:
        for start in (i for i, ch in enumerate(text) if ch == "{"):
            try:
                obj, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and "properties" in obj:
                return obj
    return None


def instance(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A small value that validates against ``schema``, with two items in every list."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return instance(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if kind == "object":
        return {name: instance(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema.get("items", {}), defs) for _ in range(2)]
    return {"string": "a short statement", "integer": 1, "number": 1.0, "boolean": True}.get(kind, "x")


class SchemaReplies:
    """``StubServer(reply=SchemaReplies())``; ``counts["chat"]`` and ``counts["prompt_chars"]`` are the tally."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()  # the server answers on its own thread

    def __call__(self, body: dict[str, Any]) -> str:
        texts = [m.get("content") or "" for m in body.get("messages", []) if isinstance(m.get("content"), str)]
        fmt = body.get("response_format") or {}
        # what the model would read: every message and the schema sent with the request (tools or response_format)
        read = sum(map(len, texts)) + (len(json.dumps(fmt)) if fmt else 0)
        read += len(json.dumps(body["tools"])) if body.get("tools") else 0
        with self._lock:
            self.counts["chat"] += 1
            self.counts["prompt_chars"] += read
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or find_schema(texts)
        answer = instance(schema) if schema else {"answer": "ok"}
        ranks = re.search(r"There are (\d+) contexts", "\n".join(texts))
        if ranks and isinstance(answer, dict) and "verdicts" in answer:  # ragdive's batched precision: k verdicts
            answer["verdicts"] = [
                {"rank": r, "reason": "", "relevant": r % 3 == 1} for r in range(1, int(ranks[1]) + 1)
            ]
        return json.dumps(answer)
