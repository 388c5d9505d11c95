"""Token-based recursive splitting of documents into chunks.

Tokens are regex tokens: a run of word characters, or one other non-space character (so "U.S." is 4 tokens).
That tokenizer is simple, language-neutral and stable across versions, which matters because chunk boundaries
are part of the index fingerprint. A chunk holds at most ``size`` tokens. Text is cut on paragraph boundaries
first, a paragraph too long for one chunk on sentence boundaries, and a sentence too long on token boundaries;
the pieces are then packed greedily into chunks. Neighbouring chunks share at most ``overlap`` tokens: the next
chunk starts at the earliest piece boundary inside the previous chunk's last ``overlap`` tokens (so an overlap
starts on a sentence or paragraph when it can), otherwise exactly ``overlap`` tokens back.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from ...records import Document

TOKEN = re.compile(r"\w+|[^\w\s]")
PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
TOKENIZER_VERSION = "regex-word-punct-v1"  # part of the index fingerprint


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text)


@dataclass(frozen=True)
class Chunk:
    id: str
    """`<document id>#<n>`."""
    document_id: str
    source: str
    text: str
    n_tokens: int


def chunk_document(doc: Document, size: int, overlap: int) -> list[Chunk]:
    if overlap >= size:
        raise ValueError("overlap must be smaller than size")
    spans = [(m.start(), m.end()) for m in TOKEN.finditer(doc.text)]
    if not spans:
        return []
    starts = [s for s, _ in spans]
    levels = [_boundaries(PARAGRAPH_BREAK, doc.text, starts), _boundaries(SENTENCE_BREAK, doc.text, starts)]
    pieces = _split(0, len(spans), size, overlap, levels)
    chunks = []
    for number, (lo, hi) in enumerate(_pack(pieces, size, overlap)):
        text = doc.text[spans[lo][0] : spans[hi - 1][1]]
        chunks.append(Chunk(f"{doc.id}#{number}", doc.id, doc.source or doc.id, text, hi - lo))
    return chunks


def chunk_documents(docs: list[Document], size: int, overlap: int) -> list[Chunk]:
    return [chunk for doc in docs for chunk in chunk_document(doc, size, overlap)]


def _boundaries(pattern: re.Pattern[str], text: str, token_starts: list[int]) -> list[int]:
    """Token indices where a piece of this level starts (the first token after each break)."""
    return sorted({bisect_left(token_starts, m.end()) for m in pattern.finditer(text)})


def _split(lo: int, hi: int, size: int, overlap: int, levels: list[list[int]]) -> list[tuple[int, int]]:
    """Token ranges of at most ``size`` tokens, cut at the coarsest boundaries that suffice."""
    if hi - lo <= size:
        return [(lo, hi)]
    if not levels:
        # windows of size - overlap tokens, so the packer can still overlap a sentence that had to be cut
        step = max(size - overlap, 1)
        return [(i, min(i + step, hi)) for i in range(lo, hi, step)]
    cuts = [b for b in levels[0] if lo < b < hi]
    edges = [lo, *cuts, hi]
    out: list[tuple[int, int]] = []
    for a, b in zip(edges, edges[1:], strict=False):
        out.extend(_split(a, b, size, overlap, levels[1:]))
    return out


def _pack(pieces: list[tuple[int, int]], size: int, overlap: int) -> list[tuple[int, int]]:
    """Greedy packing of whole pieces into chunks of at most ``size`` tokens. The next chunk starts at the earliest
    piece boundary within the last ``overlap`` tokens of the previous one, or exactly ``overlap`` tokens back
    when no boundary falls there (a sentence that had to be cut)."""
    ends = [hi for _, hi in pieces]
    boundaries = [lo for lo, _ in pieces]
    total = ends[-1]
    chunks: list[tuple[int, int]] = []
    start = 0
    while start < total:
        # the furthest piece end that keeps the chunk within size (a piece is never longer than size)
        limit = start + size
        end = ends[bisect_left(ends, limit + 1) - 1] if ends[0] <= limit else limit
        end = min(end if end > start else limit, total)
        chunks.append((start, end))
        if end >= total:
            break
        # the next chunk must still hold the piece that follows; within that, overlap as much as allowed
        next_end = ends[bisect_left(ends, end + 1)]
        lowest = max(end - overlap, next_end - size, start + 1)
        candidates = [b for b in boundaries[bisect_left(boundaries, lowest) :] if b < end]
        start = candidates[0] if candidates else min(lowest, end)
    return chunks
