"""A provider's prompt cache, as the stub plays it: which part of a prompt is a prefix the same model was already
sent (OpenAI, Gemini and DeepSeek serve such a prefix from cache and report it in the usage).

Used by the ``prefix_cached_roles`` stub reply (ragdive.testing.role_replies) and benchmarks/prompt_prefix.py.
"""

from __future__ import annotations

import bisect
from typing import Any


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The messages as the model reads them, in order (what a provider's prefix cache keys on)."""
    return "".join(f"<{m.get('role')}>{m.get('content') or ''}</{m.get('role')}>" for m in messages)


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search on slices: C-speed comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class SeenPrefixes:
    """Earlier prompts of one model, sorted: the longest prefix a new prompt shares with any of them is the one
    it shares with a neighbour in sorted order."""

    def __init__(self) -> None:
        self.sorted: list[str] = []

    def add(self, text: str) -> int:
        """``text``'s longest prefix already sent; then remember it."""
        at = bisect.bisect_left(self.sorted, text)
        neighbours = self.sorted[max(0, at - 1) : at + 1]
        best = max((common_prefix(text, other) for other in neighbours), default=0)
        self.sorted.insert(at, text)
        return best


def words_in_prefix(text: str, prefix: int) -> int:
    """Whole words (the stub's tokens) inside ``text[:prefix]``."""
    words = len(text[:prefix].split())
    cut_mid_word = 0 < prefix < len(text) and not text[prefix - 1].isspace() and not text[prefix].isspace()
    return words - cut_mid_word
