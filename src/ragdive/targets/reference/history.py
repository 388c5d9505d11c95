"""History policies: how much of the conversation the reference RAG keeps (the paper's history experiments). The
kept history is what the generator is shown and what the retriever's query is built from (see rag.py): the paper's
"no history" lowers context precision and recall, so its history reaches retrieval too.

- ``none``: nothing; every turn is answered as if it were the first.
- ``first``: the initial user turn only (its question, not the answer to it).
- ``last:Nu``: the last N utterances (user messages and answers counted one by one, as the paper's "last three
  utterances" are); ``last:N`` without a unit means the same.
- ``last:Nx``: the last N exchanges (a user message and the answer to it; an unanswered message is one too).
- ``full``: everything so far.
"""

from __future__ import annotations

import re

from ...errors import ConfigError
from ...models import Message

POLICY = re.compile(r"^(none|first|full|last:([1-9][0-9]*)([ux]?))$")
USAGE = "use none, first, full, last:Nu (N utterances), last:Nx (N exchanges) or last:N (= last:Nu)"


def check_policy(policy: str) -> str:
    if not POLICY.match(policy):
        raise ConfigError(f"history policy {policy!r}: {USAGE}")
    return policy


def select_history(history: list[Message], policy: str) -> list[Message]:
    match = POLICY.match(policy)
    if not match:
        raise ConfigError(f"history policy {policy!r}: {USAGE}")
    if policy == "none":
        return []
    if policy == "full":
        return list(history)
    if policy == "first":
        return next(([m] for m in history if m.role == "user"), [])
    keep = int(match.group(2))
    if match.group(3) == "x":
        return _last_exchanges(history, keep)
    return list(history[-keep:])  # utterances: last:3u is answer, question, answer


def _last_exchanges(history: list[Message], keep: int) -> list[Message]:
    """From the start of the keep-th user message counted from the end (each exchange opens with one)."""
    starts = [i for i, m in enumerate(history) if m.role == "user"]
    if len(starts) <= keep:
        return list(history)
    return list(history[starts[-keep] :])
