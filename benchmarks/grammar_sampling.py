"""Grammar-constrained decoding on the packaged Gemma-3-270M: llama-cpp-python's sampler (the grammar over the whole
vocabulary every token) against ragdive's grammar-checked sampler (models/backends/llamacpp_sampling.py: the sampled
token checked first), side by side in one process on the same prompts, with the machine's load.

    python benchmarks/grammar_sampling.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import llama_cpp

from ragdive.models.backends.llamacpp_sampling import grammar_checked_llama
from ragdive.models.local_files import default_gguf

SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 300},
        "claims": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "supported": {"type": "boolean"},
    },
    "required": ["reason", "claims", "supported"],
}
PROMPT = (
    "Passage: The Lumen Kettle holds 1.2 litres and boils a full kettle in about four minutes.\n"
    "Answer: It holds 1.2 litres and boils in four minutes.\n"
    "List the answer's claims and say whether the passage supports them, as JSON.\n"
)


def timed(llm: llama_cpp.Llama, grammar: llama_cpp.LlamaGrammar, runs: list[tuple[float, int]]) -> tuple[float, int]:
    began, tokens = time.perf_counter(), 0
    for temperature, seed in runs:
        out = llm.create_completion(
            PROMPT + f"#{seed}\n", grammar=grammar, max_tokens=160, temperature=temperature, seed=seed
        )
        tokens += out["usage"]["completion_tokens"]
    return time.perf_counter() - began, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of each sampler")
    args = parser.parse_args()
    options = {"model_path": str(default_gguf()), "n_ctx": 2048, "n_threads": os.cpu_count(), "verbose": False}
    samplers = {"llama-cpp-python": llama_cpp.Llama(**options), "grammar-checked": grammar_checked_llama(**options)}
    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    runs = [(0.0, 1), (0.7, 2), (0.7, 3), (0.0, 4)]
    totals = {name: [0.0, 0] for name in samplers}
    load_before = os.getloadavg()[0]
    for _ in range(args.rounds):  # interleaved, so a noisy neighbour hits both
        for name, llm in samplers.items():
            seconds, tokens = timed(llm, grammar, runs)
            totals[name][0] += seconds
            totals[name][1] += int(tokens)
    print(f"grammar-constrained decoding, {args.rounds} rounds x {len(runs)} calls, {os.cpu_count()} threads")
    per_token = {}
    for name, (seconds, tokens) in totals.items():
        per_token[name] = 1000 * seconds / max(1, int(tokens))
        print(f"  {name:<18} {seconds:6.2f} s  {int(tokens):5d} tokens  {per_token[name]:5.1f} ms per token")
    ratio = per_token["grammar-checked"] / per_token["llama-cpp-python"]
    print(f"  ratio grammar-checked / llama-cpp-python: {ratio:.2f}")
    print(f"  load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
