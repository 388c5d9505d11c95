"""History policies: how much of the conversation the reference RAG keeps (the paper's history experiments). The
kept history is what the generator is shown and what the retriever's query is built from (see rag.py): the paper's
"no history" lowers context precision and recall, so its history reaches retrieval too.

- ``none``: nothing; every turn is answered as if it were the first.
- ``first``: the initial user turn only (its question, not the answer to it).
- ``last:N``: the last N utterances (user messages and answers counted one by one, as the paper's "last three
  utterances" are).
- ``full``: everything so far.
"""

from __future__ import annotations

import re

from ...errors import ConfigError
from ...models import Message

POLICY = re.compile(r"^(none|first|full|last:([1-9][0-9]*))$")


def check_policy(policy: str) -> str:
    if not POLICY.match(policy):
        raise ConfigError(f"history policy {policy!r}: use none, first, last:N or full")
    return policy


def select_history(history: list[Message], policy: str) -> list[Message]:
    match = POLICY.match(policy)
    if not match:
        raise ConfigError(f"history policy {policy!r}: use none, first, last:N or full")
    if policy == "none":
        return []
    if policy == "full":
        return list(history)
    if policy == "first":
        return next(([m] for m in history if m.role == "user"), [])
    keep = int(match.group(2))
    return list(history[-keep:])  # utterances, not exchanges: last:3 is answer, question, answer
