"""A tiny OpenAI-compatible server on loopback that counts requests and answers plausible JSON.

It reads the JSON schema of the request (``response_format``, as ragdive's openai backend sends it, or in the
prompt, as instructor's JSON mode used by Ragas puts it) and returns a minimal instance of it: two items per list,
so multi-step metrics take every step; ragdive's batched context-precision request gets one verdict per rank. Used by
benchmarks/judge_calls.py to count Ragas's calls honestly, and by the Ragas adapter test.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import Counter
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def find_schema(texts: list[str]) -> dict[str, Any] | None:
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
    """A minimal value that validates against ``schema``."""
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


class CountingStub:
    """Run with ``with CountingStub() as stub:``; ``stub.base_url`` is the /v1 URL, ``stub.counts`` the tally."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/embeddings", self.embeddings, methods=["POST"]),
            ]
        )
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.counts["chat"] += 1
        texts = [m.get("content") or "" for m in body.get("messages", []) if isinstance(m.get("content"), str)]
        fmt = body.get("response_format") or {}
        # what the model would read: every message and the schema sent with the request (tools or response_format)
        self.counts["prompt_chars"] += sum(map(len, texts)) + len(json.dumps(fmt) if fmt else "")
        self.counts["prompt_chars"] += len(json.dumps(body["tools"])) if body.get("tools") else 0
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or find_schema(texts)
        answer = instance(schema) if schema else {"answer": "ok"}
        ranks = re.search(r"There are (\d+) contexts", "\n".join(texts))
        if ranks and isinstance(answer, dict) and "verdicts" in answer:  # ragdive's batched precision: k verdicts
            answer["verdicts"] = [
                {"rank": r, "reason": "", "relevant": r % 3 == 1} for r in range(1, int(ranks[1]) + 1)
            ]
        content = json.dumps(answer)
        return JSONResponse(
            {
                "id": f"stub-{self.counts['chat']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stub"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )

    async def embeddings(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.counts["embeddings"] += 1
        inputs = body.get("input")
        inputs = inputs if isinstance(inputs, list) else [inputs]
        data = [{"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]} for i in range(len(inputs))]
        return JSONResponse(
            {"object": "list", "data": data, "model": "stub", "usage": {"prompt_tokens": 1, "total_tokens": 1}}
        )

    def __enter__(self) -> CountingStub:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("stub server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
