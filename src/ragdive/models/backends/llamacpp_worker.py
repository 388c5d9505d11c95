"""The llama.cpp worker process: `python -m ragdive.models.backends.llamacpp_worker --model PATH ...`.

ragdive runs llama.cpp here, not in its own process, so that a native crash (a build for another CPU dies with
SIGSEGV/SIGILL at the first decode) or a generation past its timeout costs a worker, not the run: the parent
(llamacpp_process.py) sees the exit, names the cause, and keeps everything already written.

Protocol: JSON lines. The worker writes ``{"ready": true}`` (or ``{"error": ...}``) once the model is loaded, then
answers each request line ``{"id", "prompt" | "messages", "schema", "kwargs"}`` with ``{"id", "text",
"finish_reason", "usage"}`` or ``{"id", "error"}``. It exits when stdin closes (the parent is gone).
Only the standard library, llama_cpp and its numpy are imported: the worker starts in well under a second.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

GRAMMAR_CACHE_SIZE = 32
Handler = Callable[[dict[str, Any]], dict[str, Any]]


def protocol_channel() -> IO[str]:
    """A private copy of stdout for the protocol; fd 1 then points at stderr, so whatever the native library
    prints can never corrupt a reply line."""
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def serve(load: Callable[[], Handler], channel: IO[str] | None = None) -> int:
    """Load, say ready, then answer requests until stdin closes. Shared by the real worker and test doubles."""
    faulthandler.enable()  # a native crash prints the Python stack to stderr, which the parent keeps a tail of
    out = channel or protocol_channel()
    try:
        handle = load()
    except Exception as exc:  # the model file or the library is unusable: say why, exit
        out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            reply = handle(request)
        except Exception as exc:  # a bad request (e.g. a prompt longer than n_ctx): this call fails, not the worker
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        reply["id"] = request.get("id")
        out.write(json.dumps(reply) + "\n")
    return 0


def llama_handler(model: str, n_ctx: int, n_threads: int | None) -> Handler:
    import llama_cpp

    from .llamacpp_sampling import grammar_checked_llama

    # grammar calls check the sampled token first (llamacpp_sampling: ~3x fewer ms per constrained token)
    llm: Any = grammar_checked_llama(model_path=model, n_ctx=n_ctx, n_threads=n_threads, verbose=False)
    # Compiled grammars, least recently used first: a run uses a handful of schemas, but a long-lived worker
    # (a sweep, a notebook) must not grow without bound.
    grammars: OrderedDict[str, Any] = OrderedDict()

    def grammar_for(schema: str | None) -> Any:
        if schema is None:
            return None
        if schema in grammars:
            grammars.move_to_end(schema)
        else:
            grammars[schema] = llama_cpp.LlamaGrammar.from_json_schema(schema, verbose=False)
            if len(grammars) > GRAMMAR_CACHE_SIZE:
                grammars.popitem(last=False)
        return grammars[schema]

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        kwargs = dict(request.get("kwargs") or {})
        grammar = grammar_for(request.get("schema"))
        out: Any  # llama_cpp's TypedDicts differ per call; we read the same few keys of either
        if request.get("messages") is not None:
            out = llm.create_chat_completion(messages=request["messages"], grammar=grammar, **kwargs)
            choice = out["choices"][0]
            text = choice["message"].get("content") or ""
        else:
            out = llm.create_completion(request["prompt"], grammar=grammar, **kwargs)
            choice = out["choices"][0]
            text = choice["text"]
        usage = out.get("usage") or {}
        return {
            "text": text,
            "finish_reason": choice.get("finish_reason"),
            "usage": {k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens")},
        }

    return handle


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="ragdive's llama.cpp worker (started by ragdive, not by hand)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=None)
    args, _ = parser.parse_known_args(argv)  # test doubles add their own flags
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return serve(lambda: llama_handler(args.model, args.n_ctx, args.n_threads))


if __name__ == "__main__":
    sys.exit(main())
