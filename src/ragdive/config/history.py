"""History policies: how much of the conversation the reference RAG keeps (the paper's history experiments),
parsed once from ``target.history`` into a HistoryPolicy that owns ``select(history)``. The kept history is what the
generator is shown and what the retriever's query is built from (targets/reference/rag.py): the paper's "no
history" lowers context precision and recall, so its history reaches retrieval too.

- ``none``: nothing; every turn is answered as if it were the first.
- ``first``: the initial user turn only (its question, not the answer to it).
- ``last:Nu``: the last N utterances (user messages and answers counted one by one, as the paper's "last three
  utterances" are); ``last:N`` without a unit means the same.
- ``last:Nx``: the last N exchanges (a user message and the answer to it; an unanswered message is one too).
- ``full``: everything so far.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from ..errors import ConfigError

PATTERN = r"^(none|first|full|last:([1-9][0-9]*)([ux]?))$"
USAGE = "use none, first, full, last:Nu (N utterances), last:Nx (N exchanges) or last:N (= last:Nu)"


class _Message(Protocol):
    @property
    def role(self) -> str: ...


M = TypeVar("M", bound=_Message)


@dataclass(frozen=True)
class HistoryPolicy:
    kind: Literal["none", "first", "full", "last"]
    keep: int = 0
    """For ``last``: how many utterances or exchanges."""
    unit: Literal["u", "x"] = "u"
    """For ``last``: u (utterances) or x (exchanges)."""

    @classmethod
    def parse(cls, text: str) -> HistoryPolicy:
        match = re.match(PATTERN, text)
        if not match:
            raise ConfigError(f"history policy {text!r}: {USAGE}")
        if match.group(2) is None:
            return cls(match.group(1))  # type: ignore[arg-type]
        return cls("last", int(match.group(2)), "x" if match.group(3) == "x" else "u")

    def __str__(self) -> str:
        return f"last:{self.keep}{self.unit}" if self.kind == "last" else self.kind

    def select(self, history: Sequence[M]) -> list[M]:
        """The messages this policy keeps, oldest first."""
        if self.kind == "none":
            return []
        if self.kind == "full":
            return list(history)
        if self.kind == "first":
            return next(([m] for m in history if m.role == "user"), [])
        if self.unit == "x":
            starts = [i for i, m in enumerate(history) if m.role == "user"]  # each exchange opens with one
            return list(history) if len(starts) <= self.keep else list(history[starts[-self.keep] :])
        return list(history[-self.keep :])  # utterances: last:3u is answer, question, answer
