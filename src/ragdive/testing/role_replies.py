"""A stub reply that plays every ragdive role well enough for a whole run to go through over HTTP.

For throughput harnesses: the simulated user quotes a sentence of its seed document (so the evidence check
passes), the validator accepts, the target (an ``openai-chat`` target pointed at the stub) answers with one
context, and the judge gets a schema instance with two items per list — and exactly one verdict per ranked
context where the prompt says how many there are — so multi-step metrics take every step. It reads only what
is on the wire (the prompt and the requested schema), like a real server.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from .offline import draft_from_prompt
from .prefix_cache import SeenPrefixes, words_in_prefix
from .schema_example import example_for_schema

_RANKS = re.compile(r"There are (\d+) contexts")
TARGET_CONTEXT = "The stub's one retrieved passage, returned with every answer."

Reply = str | dict[str, Any]
_ANSWERS = itertools.count(1)  # this server process's target answers so far (unique_roles)
_SEEN: defaultdict[str, SeenPrefixes] = defaultdict(SeenPrefixes)  # per model: prompts sent (prefix_cached_roles)


def ragdive_roles(body: dict[str, Any]) -> Reply:
    """The reply for one chat request: its text, or ``{"text", "extra"}`` with extra top-level response fields
    (the stub server's reply contract)."""
    messages = body.get("messages") or []
    text = "\n".join(str(m.get("content") or "") for m in messages)
    schema = _schema(body)
    if schema is None:  # the target: plain chat, contexts beside the answer (the openai-chat target's contexts_field)
        contexts = [{"text": TARGET_CONTEXT, "source": "stub"}]
        return {"text": "The stub answers from its one passage.", "extra": {"contexts": contexts}}
    props = schema.get("properties", {})
    if "rag_input" in props:
        return json.dumps(draft_from_prompt(text))
    if "valid" in props and "failed_checks" in props:
        return json.dumps({"reason": "fine", "failed_checks": [], "valid": True})
    answer = _instance(schema, schema)
    ranks = _RANKS.search(text)
    if ranks and isinstance(answer, dict) and "verdicts" in answer:
        answer["verdicts"] = [
            {**_instance(_items(schema, "verdicts"), schema), "rank": r} for r in range(1, int(ranks[1]) + 1)
        ]
    return json.dumps(answer)


def unique_roles(body: dict[str, Any]) -> Reply:
    """As ragdive_roles, but every target answer is a new text (numbered), so no two conversations repeat past
    their first question and every later user, validator and judge request is new: a throughput figure from it
    counts calls really made, not answers the run's own cache replayed (issue 27)."""
    reply = ragdive_roles(body)
    if isinstance(reply, dict):
        return {**reply, "text": f"{reply['text']} (answer {next(_ANSWERS)})"}
    return reply


def prefix_cached_roles(body: dict[str, Any]) -> Reply:
    """As unique_roles, with the usage a provider with a prompt cache reports: ``prompt_tokens`` (words, as the
    stub counts tokens) and ``prompt_tokens_details.cached_tokens``, the words of the longest prefix (roles and
    texts, in order) that an earlier request to the same model already had (OpenAI's shape; its 1,024-token
    minimum is not applied)."""
    reply = unique_roles(body)
    text, extra = (reply, {}) if isinstance(reply, str) else (str(reply["text"]), dict(reply.get("extra") or {}))
    prompt = "".join(f"{m.get('role')}\n{m.get('content') or ''}\n" for m in body.get("messages") or [])
    shared = _SEEN[str(body.get("model"))].add(prompt)
    extra["usage"] = {
        "prompt_tokens": len(prompt.split()),
        "completion_tokens": len(text.split()),
        "total_tokens": len(prompt.split()) + len(text.split()),
        "prompt_tokens_details": {"cached_tokens": words_in_prefix(prompt, shared)},
    }
    return {"text": text, "extra": extra}


def other_simulators(body: dict[str, Any]) -> Reply:
    """As ragdive_roles, and "not complete" to another simulator's completion check (DeepEval's controller asks
    for ``is_complete``), so its conversations run their full number of turns, as ragdive's do: for side-by-side
    benchmarks on one stub (benchmarks/deepeval_side.py)."""
    schema = _schema(body) or {}
    if "is_complete" in schema.get("properties", {}):
        return json.dumps({"is_complete": False, "reason": "the user has more to ask"})
    return unique_roles(body)


CONTEXTS_FOLDER = "RAGDIVE_STUB_CONTEXTS"
"""Environment variable naming the folder of .txt/.md documents the ``corpus_contexts`` target retrieves from."""
PASSAGE_CHARS, PASSAGES = 800, 4


def corpus_contexts(body: dict[str, Any]) -> Reply:
    """As other_simulators (so ragdive and DeepEval can share one stub), but the target returns real-length
    contexts: the PASSAGES passages of ~PASSAGE_CHARS characters, from the documents in $RAGDIVE_STUB_CONTEXTS,
    that share the most words with the last message (a crude retriever, deterministic): what a judge is given
    with a real RAG system, not one short sentence (issue 27's tokens-per-conversation figure)."""
    reply = other_simulators(body)
    if not isinstance(reply, dict) or "contexts" not in (reply.get("extra") or {}):
        return reply
    messages = body.get("messages") or [{}]
    asked = set(_WORD.findall(str(messages[-1].get("content") or "").lower()))
    ranked = sorted(_passages(), key=lambda p: -len(asked & p[1]))[:PASSAGES]  # stable: ties keep corpus order
    contexts = [{"text": text, "source": source} for text, _, source in ranked]
    return {**reply, "extra": {**reply["extra"], "contexts": contexts}}


_WORD = re.compile(r"[a-z]{4,}")


@functools.cache
def _passages() -> list[tuple[str, frozenset[str], str]]:
    """Every document of $RAGDIVE_STUB_CONTEXTS cut into passages at sentence ends near PASSAGE_CHARS."""
    folder = os.environ.get(CONTEXTS_FOLDER)
    if not folder:
        raise RuntimeError(f"corpus_contexts needs ${CONTEXTS_FOLDER} (a folder of .txt/.md documents)")
    out: list[tuple[str, frozenset[str], str]] = []
    for path in sorted(p for ext in ("*.txt", "*.md") for p in Path(folder).rglob(ext)):
        text, start = " ".join(path.read_text(encoding="utf-8", errors="replace").split()), 0
        while start < len(text):
            end = text.find(". ", start + PASSAGE_CHARS)
            end = len(text) if end < 0 else end + 1
            passage = text[start:end].strip()
            out.append((passage, frozenset(_WORD.findall(passage.lower())), path.name))
            start = end
    return out


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    return (fmt.get("json_schema") or {}).get("schema") or {}


def _items(schema: dict[str, Any], name: str) -> dict[str, Any]:
    sub = _resolve(schema.get("properties", {}).get(name, {}), schema)
    return _resolve(sub.get("items", {}), schema)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return _resolve(root.get("$defs", {}).get(schema["$ref"].rsplit("/", 1)[-1], {}), root)
    return schema


def _instance(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """Like example_for_schema, but two items per list (within maxItems), so list-driven steps really run."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return _instance(options[0], root)
    if schema.get("type") == "object" or "properties" in schema:
        return {name: _instance(sub, root) for name, sub in schema.get("properties", {}).items()}
    if schema.get("type") == "array":
        count = min(2, int(schema.get("maxItems", 2)))
        return [_instance(schema.get("items", {}), root) for _ in range(max(count, int(schema.get("minItems", 0))))]
    if schema.get("type") == "string" and "enum" not in schema:
        return "a short statement"
    return example_for_schema(schema, root)
