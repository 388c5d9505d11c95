"""Seed documents for conversations: one document each, or a group of related documents (multi-hop).

Sampling is a pure function of (run seed, conversation index): the plan for conversation 7 is the same whether
the run asks for 10 or 100 conversations, so a resumed or extended run draws exactly the same seeds.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
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

    def shared_terms(self, documents: list[Document]) -> list[str]:
        """The distinctive words a group shares, weighted by their IDF over this corpus (see ``shared_terms``)."""
        return shared_terms(documents, document_frequency=self._document_frequency, corpus_size=len(self.documents))

    @cached_property
    def _document_frequency(self) -> Counter[str]:
        return Counter(w for d in self.documents for w in set(_word_counts(d.text)))

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


def shared_terms(
    documents: list[Document],
    limit: int = 8,
    *,
    document_frequency: Mapping[str, int] | None = None,
    corpus_size: int = 0,
) -> list[str]:
    """Distinctive words (3+ letters, not stopwords) that every document of a group contains, shown to the
    generator as the link between related documents. Distinctive: found in few documents of the corpus (at most
    the group's size or a tenth of the corpus, whichever is more, and never in all of it), ranked by their count
    in the group times their IDF, log(N / df). Words every article uses ("often", "used", "first") are left out,
    and a group that shares no distinctive word gets no hint (an empty list): a hint built from generic words
    paired unrelated articles as if they were related. Without ``document_frequency`` the group is its own
    corpus, where no shared word is distinctive."""
    if len(documents) < 2:
        return []
    counts = [_word_counts(d.text) for d in documents]
    common = set(counts[0]).intersection(*counts[1:]) - _STOPWORDS
    n = max(corpus_size, len(documents)) if document_frequency is not None else len(documents)
    frequency = document_frequency if document_frequency is not None else dict.fromkeys(common, len(documents))
    most = max(len(documents), math.ceil(n / 10))
    weight = {w: sum(c[w] for c in counts) * math.log(n / frequency[w]) for w in common if frequency.get(w, n) < n}
    distinctive = [w for w in weight if frequency[w] <= most and weight[w] > 0]
    return sorted(distinctive, key=lambda w: (-weight[w], w))[:limit]


def _word_counts(text: str) -> Counter[str]:
    return Counter(w.lower() for w in _WORD.findall(text) if len(w) > 2)


# Function words are never a link, however rare a small corpus makes them: in a 4-document corpus IDF cannot tell
# "very" from "canal" (both in 2 of 4), and a capable model's run was told a bee article and a canal article
# "share ... very".
_STOPWORDS = frozenset(
    "the and for are was were with that this from which also has have had not but its his her their they them "
    "been into than then there these those such who whom whose what when where while will would can could "
    "may might one two all any more most other some many over under after before about between during "
    "very only each both well just much even still like because however although though through without "
    "within until upon same own off out now how why our your you she him does did doing being should shall "
    "again further once here few nor too yet per via around against across along among whether either neither "
    "ever never always often also rather quite almost already".split()
)
