"""A stand-in for the llama.cpp worker that speaks its protocol without llama.cpp, for tests of what ragdive does
when the worker misbehaves: `--abort-after N` calls os.abort() at request N+1 (a native crash), `--hang` never
answers a decode (a generation past its timeout), `--fail-load` cannot load the model. Otherwise it answers a
structured request with a minimal valid instance of the schema and a plain one with "Paris.".

Used as `llamacpp/<file>` with `options: {worker_module: ragdive.testing.llama_worker_double, worker_args: [...]}`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from ragdive.models.backends.llamacpp_worker import Handler, serve
from ragdive.testing.schema_example import example_for_schema


def double_handler(abort_after: int | None, hang: bool) -> Handler:
    seen = 0

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal seen
        seen += 1
        if abort_after is not None and seen > abort_after:
            os.abort()
        if hang:
            time.sleep(3600)
        schema = request.get("schema")
        text = json.dumps(example_for_schema(json.loads(schema))) if schema else "Paris."
        return {"text": text, "finish_reason": "stop", "usage": {"prompt_tokens": 3, "completion_tokens": 2}}

    return handle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--abort-after", type=int, default=None)
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--fail-load", action="store_true")
    args, _ = parser.parse_known_args(argv)

    def load() -> Handler:
        if args.fail_load:
            raise ValueError("not a GGUF file")
        return double_handler(args.abort_after, args.hang)

    return serve(load)


if __name__ == "__main__":
    sys.exit(main())
