"""Lexical retrieval with `bm25s`: English stop words removed, words stemmed with Snowball (PyStemmer), so "bees"
matches "bee" and "ruled" matches "rules". A chunk sharing no term with the query scores 0 and is not returned:
a lexical retriever has nothing to say about it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import bm25s
import Stemmer

from .base import Hit, Retriever

FOLDER = "bm25-en-snowball"  # the index's folder name: a change of tokenization must not reuse an old index


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def _tokens(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(  # type: ignore[no-any-return]
        texts, stopwords="en", stemmer=_stemmer().stemWords, return_ids=False, show_progress=False
    )


class BM25Retriever(Retriever):
    def __init__(self, model: bm25s.BM25, size: int) -> None:
        self._model = model
        self.size = size

    @classmethod
    def build(cls, texts: list[str]) -> BM25Retriever:
        model = bm25s.BM25()
        model.index(_tokens(texts), show_progress=False)
        return cls(model, len(texts))

    def save(self, folder: Path) -> None:
        self._model.save(str(folder))

    @classmethod
    def load(cls, folder: Path, size: int) -> BM25Retriever:
        return cls(bm25s.BM25.load(str(folder)), size)

    def search(self, query: str, k: int) -> list[Hit]:
        k = min(k, self.size)
        if k == 0:
            return []
        docs, scores = self._model.retrieve(_tokens([query]), k=k, show_progress=False, n_threads=1)
        return [Hit(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
