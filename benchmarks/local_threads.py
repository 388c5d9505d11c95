"""Decode speed of the embedded model's worker with one thread against all cores (llama.cpp's own default is half
the cores). Prints tokens/s of each and the ratio measured in this run; same prompts, with and without a grammar.

    python benchmarks/local_threads.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from ragdive.models.local_files import default_gguf

SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string", "maxLength": 80}, "correct": {"type": "boolean"}},
    "required": ["reason", "correct"],
}
PROMPT = "Question: What is the capital of France?\nAnswer: Paris.\nIs the answer correct? JSON:"


def tokens_per_second(threads: int, calls: int = 6) -> float:
    worker = [sys.executable, "-m", "ragdive.models.backends.llamacpp_worker", "--model", str(default_gguf())]
    proc = subprocess.Popen(
        [*worker, "--n-ctx", "2048", "--n-threads", str(threads)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin and proc.stdout
    assert json.loads(proc.stdout.readline()).get("ready"), "the worker did not load the model"
    tokens, start = 0, time.perf_counter()
    for i in range(calls):
        kwargs = {"max_tokens": 64, "temperature": 0.7, "seed": i}
        request = {"id": i, "prompt": PROMPT, "schema": json.dumps(SCHEMA) if i % 2 else None, "kwargs": kwargs}
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        tokens += json.loads(proc.stdout.readline())["usage"]["completion_tokens"]
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return tokens / elapsed


def main() -> None:
    cores = os.cpu_count() or 1
    one, every = [], []
    for _ in range(2):  # interleaved, so drift in machine load hits both
        one.append(tokens_per_second(1))
        every.append(tokens_per_second(cores))
    ratio = max(every) / max(one)
    print(f"n_threads=1: {max(one):.1f} tok/s   n_threads={cores}: {max(every):.1f} tok/s   ratio {ratio:.2f}x")


if __name__ == "__main__":
    main()
