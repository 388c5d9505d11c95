"""The conversation browser's data as the report embeds it: small, and only the part the list needs read at start.

Three ideas, each for a measured cost (issue 27: a 10,000 x 5 report must stay <= 30 MB and open in <= 5 s):

- Each distinct context text is stored once, in one table, and a turn names it by index: a target returns the
  same corpus chunks for many questions, and gzip's 32 KB window cannot see a repeat from another conversation.
- Words are replaced by numbers before gzip (a word-replacing transform): every token (a word with the space
  before it, or a run of other characters) gets an index in one shared vocabulary, the most frequent first, and a
  stream is the indices as varints. gzip then codes a frequent word in a byte or two instead of a back-reference of
  ~20 bits; on the benchmark's text this is a third smaller (real prose gains less: it repeats phrases gzip
  already finds). Lossless: the tokens of a text joined give the text back exactly.
- The list (each conversation's id, persona, status, documents, whole-conversation scores, and every score's
  metric and value for the filters) is one stream read when the page opens; the turns are in chunks of
  PER_CHUNK conversations, each inflated only when one of its conversations is first opened.

Each stream is gzip'ed (libdeflate; its level 12 for a large report: level_for) and written as 7-bit text
(text7.py); the page's script (templates/browser.js) undoes it with the browser's own DecompressionStream.
``unpack`` is the inverse, for tests and tools.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import deflate
import numpy as np

from . import text7

PER_CHUNK = 200  # conversations per turns chunk: opening one inflates ~0.5 MB at most in a large report

# libdeflate's strongest level: the same gzip the page inflates, 2.8 % smaller than zlib's 6 (zlib's 9: 0.3 %). All
# the streams of a 1,000 x 5 run on prose take 0.32 s, zlib 6 0.18 s and 9 0.50 s; level 10 is 0.2-0.6 % larger in
# 0.22 s. Zopfli is no smaller on these streams (5 iterations: +0.03 %; 1: +2.4 %) and 12-14 times slower
LEVEL = 12
# ...but only where it pays: `ragdive run` writes its report after the last answer, while the user waits (issue 27:
# <= 0.3 s from the last answer to the exit at 200 x 5). The streams of a 200 x 5 run (0.68 MB before gzip) take
# 54 ms at level 12 and 7 ms at libdeflate's 6, for 15 KB (4 %) more page; a 1,000 x 5 run on prose (4.6 MB) saves
# 81 KB at level 12, and 10,000 x 5 needs it to stay under 30 MB
QUICK_LEVEL, LARGE = 6, 2_000_000


def level_for(size: int) -> int:
    """The gzip level for streams of ``size`` bytes in all."""
    return LEVEL if size >= LARGE else QUICK_LEVEL


# a word with the one space before it, or a run of other characters (". ", "), ", "\n\n"): every character is in
# exactly one token. Runs, not single characters: fewer tokens to find and join (the tokenizer was half of packing).
# A run stops before a space and a word, which keeps its space (". The" is "." + " The", not ". " + "The"): one
# form of each word instead of two, 5 % fewer distinct tokens on prose
TOKEN = re.compile(r" ?\w+|\W+?(?= \w)|\W+")


# numbers converted at a time: a 10,000 x 5 report's list stream (~3 million tokens) converted whole took ~120 MB of
# work memory, the report's peak
SLICE = 1 << 20


def varints(ids: np.ndarray) -> bytes:
    """Each number in 7-bit groups, least significant first, the high bit set on all but the last (as the page's
    script reads them), SLICE numbers at a time: ~15 bytes of work memory a number, against ~50 for a bytes object
    each."""
    return b"".join(_varints(ids[i : i + SLICE]) for i in range(0, len(ids), SLICE))


def _varints(ids: np.ndarray) -> bytes:
    ids = ids.astype(np.uint32, copy=False)
    groups = max(1, (int(ids.max(initial=0)).bit_length() + 6) // 7)
    out = np.empty((len(ids), groups), dtype=np.uint8)
    kept = np.empty((len(ids), groups), dtype=bool)
    for g in range(groups):
        out[:, g] = (ids >> (7 * g)) & 127
        kept[:, g] = ids >= (1 << (7 * g)) if g else True
    out[:, :-1] |= kept[:, 1:].view(np.uint8) << 7  # more groups follow
    return out[kept].tobytes()  # row by row: each number's groups in order


def varint(n: int) -> bytes:
    """One number as ``varints`` writes it (numpy's per-call cost is too much for one)."""
    out = bytearray()
    while n >= 128:
        out.append(n & 127 | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varints(data: bytes | bytearray) -> np.ndarray:
    """The numbers of a run of varints (the inverse of ``varints``), read SLICE bytes at a time."""
    parts, start = [np.zeros(0, dtype=np.uint32)], 0
    while start < len(data):
        end = min(start + SLICE, len(data))
        while data[end - 1] >= 128:  # cut after a number's last group (the data ends with one)
            end += 1
        parts.append(_read_varints(memoryview(data)[start:end]))
        start = end
    return np.concatenate(parts)


def _read_varints(data: memoryview) -> np.ndarray:
    groups = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(groups < 128)
    starts = np.concatenate([[0], ends[:-1] + 1])
    sizes = ends - starts + 1
    numbers = np.zeros(len(ends), dtype=np.uint32)
    for g in range(int(sizes.max(initial=0))):
        has = sizes > g
        numbers[has] |= (groups[starts[has] + g] & 127).astype(np.uint32) << np.uint32(7 * g)
    return numbers


class Vocabulary(dict[str, bytes]):
    """Token -> its number in order of first use, as a varint (a token is added the first time it is seen). The
    page's numbers are given once every text has been read (``ranks``): the most frequent tokens get the smallest."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: list[str] = []

    def __missing__(self, token: str) -> bytes:
        code = self[token] = varint(len(self.tokens))
        self.tokens.append(token)
        return code

    def encode(self, text: str) -> bytes:
        return b"".join(map(self.__getitem__, TOKEN.findall(text)))

    def ranks(self, streams: Iterable[Stream]) -> tuple[list[str], np.ndarray]:
        """The tokens in the page's order and each first-use number's place in it. Most frequent first, so that the
        128 commonest tokens are one byte and the next 16,256 two (in order of first use a frequent word met late
        took two or three); among equally frequent tokens alphabetically, so that the vocabulary's own JSON
        compresses better. On the SQuAD prose at 1,000 x 5 the streams are 7 % smaller and the vocabulary 14 %."""
        tokens = self.tokens
        counts = np.zeros(len(tokens), dtype=np.int64)
        for stream in streams:
            counts += np.bincount(stream.numbers(), minlength=len(tokens))
        alphabetical = np.array(sorted(range(len(tokens)), key=tokens.__getitem__), dtype=np.int64)
        order = alphabetical[np.argsort(-counts[alphabetical], kind="stable")]
        place = np.empty(len(tokens), dtype=np.uint32)
        place[order] = np.arange(len(tokens), dtype=np.uint32)
        return [tokens[i] for i in order.tolist()], place


class Stream:
    """One stream's tokens as varints of their first-use numbers (~1.7 bytes a token on prose, where 4-byte numbers
    held 110 MB more at the peak of a 10,000 x 5 report; its text is not kept), renumbered, gzip'ed and written as
    7-bit text once every stream is read and the numbers are final."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.data = bytearray()

    def put(self, text: str) -> None:
        self.data += self.vocabulary.encode(text)

    def numbers(self) -> np.ndarray:
        return read_varints(self.data)

    def close(self, place: np.ndarray, level: int) -> str:
        """The stream in the page's numbers (``place``: Vocabulary.ranks), gzip'ed at ``level``; its own numbers
        are let go."""
        data = deflate.gzip_compress(varints(place[self.numbers()]), level)
        self.data = bytearray()
        return text7.encode(data)


@dataclass
class Packed:
    """What the page embeds: the vocabulary (JSON list of tokens, gzip'ed), the list stream, the context texts'
    table and the turns chunks (each a JSON list, per conversation, of its turns)."""

    vocabulary: str
    conversations: str
    contexts: str
    chunks: list[str] = field(default_factory=list)
    per_chunk: int = PER_CHUNK
    count: int = 0


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def listing(conversation: dict[str, Any]) -> dict[str, Any]:
    """What the list and its filters need: everything but the turns, whose scores become [metric, value] marks
    ([metric, value, 1] when unscored)."""
    marks = [
        [s["metric"], s["value"], 1] if s["unscored"] is not None else [s["metric"], s["value"]]
        for t in conversation["turns"]
        for s in t["scores"]
    ]
    return {
        **{k: v for k, v in conversation.items() if k != "turns"},
        "turn_count": len(conversation["turns"]),
        "marks": marks,
    }


def pack(conversations: Iterable[dict[str, Any]], per_chunk: int | None = None) -> Packed:
    """Each conversation is tokenized as it comes (neither the whole JSON nor every view is held, only each
    token's number), then each stream is compressed in the vocabulary's final order.
    ``per_chunk``: conversations per turns chunk (default PER_CHUNK, read at the call: tests make it small)."""
    per_chunk = per_chunk or PER_CHUNK
    vocabulary = Vocabulary()
    texts: dict[str, int] = {}

    def ref(context: dict[str, Any]) -> dict[str, Any]:
        return {
            "t": texts.setdefault(context["text"], len(texts)),
            "source": context["source"],
            "score": context["score"],
        }

    listed, chunks, chunk = Stream(vocabulary), [], Stream(vocabulary)
    listed.put("[")
    n = 0
    for n, c in enumerate(conversations, 1):
        if n > 1 and (n - 1) % per_chunk == 0:
            chunk.put("]")
            chunks.append(chunk)
            chunk = Stream(vocabulary)
        first = (n - 1) % per_chunk == 0
        listed.put(("" if n == 1 else ",") + dumps(listing(c)))
        turns = [{**t, "contexts": [ref(x) for x in t["contexts"]]} for t in c["turns"]]
        chunk.put(("[" if first else ",") + dumps(turns))
    if n:
        chunk.put("]")
        chunks.append(chunk)
    listed.put("]")
    contexts = Stream(vocabulary)
    contexts.put(dumps(list(texts)))
    texts.clear()
    streams = [listed, contexts, *chunks]
    level = level_for(sum(len(s.data) for s in streams))
    tokens, place = vocabulary.ranks(streams)
    del vocabulary, streams
    words = text7.encode(deflate.gzip_compress(dumps(tokens).encode("utf-8"), level))
    del tokens
    return Packed(
        words,
        listed.close(place, level),
        contexts.close(place, level),
        [c.close(place, level) for c in chunks],
        per_chunk,
        n,
    )


def read_stream(block: str, tokens: list[str]) -> Any:
    data, out, index, shift = gzip.decompress(text7.decode(block)), [], 0, 0
    for byte in data:
        index |= (byte & 127) << shift
        if byte & 128:
            shift += 7
        else:
            out.append(tokens[index])
            index, shift = 0, 0
    return json.loads("".join(out))


def unpack(vocabulary: str, conversations: str, contexts: str, chunks: list[str]) -> list[dict[str, Any]]:
    """The conversations back, as report_data gave them (what the page's script rebuilds)."""
    tokens = json.loads(gzip.decompress(text7.decode(vocabulary)))
    texts = read_stream(contexts, tokens)
    turns = [turns for chunk in chunks for turns in read_stream(chunk, tokens)]
    out = []
    for c, its_turns in zip(read_stream(conversations, tokens), turns, strict=True):
        del c["turn_count"], c["marks"]
        for t in its_turns:
            t["contexts"] = [{"text": texts[x["t"]], "source": x["source"], "score": x["score"]} for x in t["contexts"]]
        out.append({**c, "turns": its_turns})
    return out
