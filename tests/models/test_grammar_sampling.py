"""The grammar-checked sampler (llamacpp_sampling) against llama-cpp-python's own, on the packaged Gemma-3-270M
(slow): greedy decoding under a JSON grammar picks the same tokens, and a temperature still gives text the grammar
allows. (Its speed is measured by benchmarks/grammar_sampling.py, not asserted.)"""

from __future__ import annotations

import json

import pytest

from ragdive.models.local_files import default_gguf

llama_cpp = pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string", "maxLength": 120}, "correct": {"type": "boolean"}},
    "required": ["reason", "correct"],
}
PROMPTS = [
    "Question: Which country is Paris in?\nAnswer: France.\nIs the answer correct? Reply in JSON.\n",
    "Question: How many legs has a spider?\nAnswer: Six.\nIs the answer correct? Reply in JSON.\n",
]


def test_greedy_grammar_decoding_is_unchanged_and_sampled_text_parses() -> None:
    from ragdive.models.backends.llamacpp_sampling import grammar_checked_llama

    options = {"model_path": str(default_gguf()), "n_ctx": 1024, "n_threads": 2, "verbose": False}
    stock = llama_cpp.Llama(**options)
    checked = grammar_checked_llama(**options)
    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    for prompt in PROMPTS:
        want = stock.create_completion(prompt, grammar=grammar, max_tokens=80, temperature=0.0)
        got = checked.create_completion(prompt, grammar=grammar, max_tokens=80, temperature=0.0)
        assert got["choices"][0]["text"] == want["choices"][0]["text"]
        assert got["usage"]["completion_tokens"] == want["usage"]["completion_tokens"]
    finished = 0
    for seed in range(4):
        out = checked.create_completion(PROMPTS[0], grammar=grammar, max_tokens=120, temperature=0.8, seed=seed)
        if out["choices"][0]["finish_reason"] == "stop":  # cut by max_tokens is unfinished JSON, whoever samples
            assert set(json.loads(out["choices"][0]["text"])) == {"reason", "correct"}
            finished += 1
    assert finished >= 1
