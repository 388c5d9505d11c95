"""How much of each role's prompts a provider's prompt cache could serve: the share of prompt characters that
lie in a prefix the same model was already sent, measured on a whole run against the stub (every call made).

    python benchmarks/prompt_prefix.py                                   # 20 x 5, synthetic documents
    python benchmarks/prompt_prefix.py --corpus ../shared/data/squad/corpus --conversations 20 --turns 5

Providers discount a repeated prompt *prefix*: OpenAI, Gemini and DeepSeek automatically (OpenAI from 1,024
tokens, in steps of 128), Anthropic with cache marks. For every request, in the order the server got them, the
longest prefix it shares with any earlier request of the same model (the messages as sent, role and text) is
"already sent" (the stub reports the same as a provider's cached tokens, and the share ragdive recorded in the
manifest's spend lines is printed last). Printed per role: requests, prompt characters, the share already sent
(all requests, and those after turn 1 for the user and validator), and the share under OpenAI's rule
(characters / 4 as tokens, a prefix counted from 1,024 tokens in 128-token steps). Characters, not tokens: no
tokenizer is assumed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from throughput import experiment, ragdive_run, synthetic_corpus

from ragdive.testing import StubProcess
from ragdive.testing.prefix_cache import SeenPrefixes, prompt_text

_TURN = re.compile(r"(?:Write turn|# Draft of turn) (\d+)")
ROLES = {"stub-user": "user", "stub-validator": "validator", "stub-judge": "judge", "rag": "target"}
CHARS_PER_TOKEN = 4
OPENAI_MIN, OPENAI_STEP = 1024, 128


def openai_cached(prefix_chars: int) -> int:
    """Characters OpenAI's rule would serve from its cache: from 1,024 tokens on, in 128-token steps."""
    tokens = prefix_chars // CHARS_PER_TOKEN
    return 0 if tokens < OPENAI_MIN else (tokens // OPENAI_STEP) * OPENAI_STEP * CHARS_PER_TOKEN


def measure(bodies: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    seen: dict[str, SeenPrefixes] = defaultdict(SeenPrefixes)
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for body in bodies:
        model = str(body.get("model"))
        role = ROLES.get(model, model)
        text = prompt_text(body.get("messages") or [])
        shared = seen[model].add(text)
        turn = _TURN.search(text)
        later = turn is not None and int(turn.group(1)) > 1
        row = rows[role]
        row["requests"] += 1
        row["chars"] += len(text)
        row["shared"] += shared
        row["openai"] += min(len(text), openai_cached(shared))
        if later:
            row["later_chars"] += len(text)
            row["later_shared"] += shared
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=None, help="a corpus folder (default: synthetic)")
    parser.add_argument("--max-document-chars", type=int, default=None, help="simulation.max_document_chars")
    args = parser.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubProcess(reply="ragdive.testing.role_replies:prefix_cached_roles", keep_requests=True) as stub,
    ):
        corpus = args.corpus or synthetic_corpus(Path(tmp) / "corpus", documents=max(30, args.conversations))
        config = experiment(stub.base_url, corpus, Path(tmp), args.conversations, args.turns, None)
        if args.max_document_chars:
            config.simulation.max_document_chars = args.max_document_chars
        run = asyncio.run(ragdive_run(stub, config))
    print(
        f"{args.conversations} x {args.turns}: {run.requests:,} requests sent, ragdive cache hits {run.cache_hits}; "
        "prompt characters per role, and the share in a prefix the same model was already sent"
    )
    heads = ("requests", "chars/request", "already sent", "after turn 1", "OpenAI rule")
    print(f"{'role':<10} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, (8, 13, 12, 12, 11), strict=True)))
    for role, row in sorted(measure(run.bodies).items()):
        later = f"{row['later_shared'] / row['later_chars']:12.1%}" if row["later_chars"] else f"{'-':>12}"
        print(
            f"{role:<10} {row['requests']:8.0f} {row['chars'] / row['requests']:13,.0f} "
            f"{row['shared'] / row['chars']:12.1%} {later} {row['openai'] / row['chars']:11.1%}"
        )
    print(
        "recorded by ragdive from the stub's usage (prompt_tokens_details.cached_tokens, words as tokens, no "
        "minimum length): provider_cached_tokens / prompt_tokens per role"
    )
    for line in run.spend:
        if line.prompt_tokens:
            print(
                f"  {line.role:<10} {line.provider_cached_tokens / line.prompt_tokens:6.1%} of {line.prompt_tokens:,}"
            )
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
