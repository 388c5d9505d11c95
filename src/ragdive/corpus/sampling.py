"""Seed documents for conversations: one document each, or a group of related documents (multi-hop).

Sampling is a pure function of (run seed, conversation index): the plan for conversation 7 is the same whether
the run asks for 10 or 100 conversations, so a resumed or extended run draws exactly the same seeds.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cached_property

import numpy as np

from ..errors import ConfigError
from ..records import Document

_WORD = re.compile(r"(?u)\b\w\w+\b")
# how much of a document is used as its BM25 query: enough to capture its topic, cheap to score
_QUERY_WORDS = 300


def _permutation(seed: int, epoch: int, n: int) -> np.ndarray:
    return np.random.default_rng(np.random.SeedSequence([seed, epoch])).permutation(n)


def anchor_index(n_documents: int, seed: int, index: int) -> int:
    """The document conversation ``index`` starts from. Every document is used once before any is used twice
    (one fresh permutation per pass over the corpus)."""
    epoch, position = divmod(index, n_documents)
    return int(_permutation(seed, epoch, n_documents)[position])


class SeedSampler:
    """Draws the seed document(s) of each conversation from a corpus."""

    def __init__(self, documents: list[Document], *, seed: int, mode: str = "single", group_size: int = 2) -> None:
        if not documents:
            raise ConfigError("the corpus has no documents to draw seed documents from")
        if mode not in ("single", "related"):
            raise ConfigError(f"unknown sampling {mode!r}; use single or related")
        if mode == "related" and len(documents) < group_size:
            raise ConfigError(
                f"related sampling needs at least {group_size} documents; the corpus has {len(documents)}"
            )
        self.documents = documents
        self.seed = seed
        self.mode = mode
        self.group_size = group_size

    def for_conversation(self, index: int) -> list[Document]:
        anchor = anchor_index(len(self.documents), self.seed, index)
        if self.mode == "single":
            return [self.documents[anchor]]
        return [self.documents[i] for i in self.related_group(anchor)]

    def related_group(self, anchor: int) -> list[int]:
        """The anchor and its ``group_size - 1`` nearest documents by BM25 (the anchor's text as the query).
        When no other document shares a term, the nearest are still returned (score 0), in index order."""
        return self._neighbours[anchor][: self.group_size]

    @cached_property
    def _neighbours(self) -> list[list[int]]:
        import bm25s  # a heavy import: only related sampling needs it

        texts = [f"{d.title}\n{d.text}" for d in self.documents]
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        queries = [" ".join(_WORD.findall(t)[:_QUERY_WORDS]) for t in texts]
        query_tokens = bm25s.tokenize(queries, stopwords="en", return_ids=False, show_progress=False)
        k = min(len(texts), self.group_size + 1)
        ids, scores = retriever.retrieve(query_tokens, k=k, show_progress=False)
        out = []
        for anchor, (row, row_scores) in enumerate(zip(ids, scores, strict=True)):
            # stable order: best score first, ties by index; the anchor itself always leads
            ranked = sorted(
                ((int(i), float(s)) for i, s in zip(row, row_scores, strict=True) if int(i) != anchor),
                key=lambda pair: (-pair[1], pair[0]),
            )
            out.append([anchor, *[i for i, _ in ranked]])
        return out


def shared_terms(documents: list[Document], limit: int = 8) -> list[str]:
    """Words (3+ letters, not stopwords) that occur in every document of a group, most frequent first: shown to
    the generator as the link between related documents."""
    if len(documents) < 2:
        return []
    counts = [Counter(w.lower() for w in _WORD.findall(d.text) if len(w) > 2) for d in documents]
    common = set(counts[0]).intersection(*counts[1:]) - _STOPWORDS
    return sorted(common, key=lambda w: (-sum(c[w] for c in counts), w))[:limit]


_STOPWORDS = frozenset(
    "the and for are was were with that this from which also has have had not but its his her their they them "
    "been into than then there these those such who whom whose what when where while will would can could "
    "may might one two all any more most other some many over under after before about between during".split()
)
