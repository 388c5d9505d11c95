"""The conversation browser's data as the report embeds it: small, and only the part the list needs read at start.

Three ideas, each for a measured cost (issue 27: a 10,000 x 5 report must stay <= 30 MB and open in <= 5 s):

- Each distinct context text is stored once, in one table, and a turn names it by index: a target returns the
  same corpus chunks for many questions, and gzip's 32 KB window cannot see a repeat from another conversation.
- Words are replaced by numbers before gzip (a word-replacing transform): every token (a word with the space
  before it, or one other character) gets an index in one shared vocabulary, in order of first use, and a stream
  is the indices as varints. gzip then codes a frequent word in a byte or two instead of a back-reference of
  ~20 bits; on the benchmark's text this is a third smaller (real prose gains less: it repeats phrases gzip
  already finds). Lossless: the tokens of a text joined give the text back exactly.
- The list (each conversation's id, persona, status, documents, whole-conversation scores, and every score's
  metric and value for the filters) is one stream read when the page opens; the turns are in chunks of
  PER_CHUNK conversations, each inflated only when one of its conversations is first opened.

Each stream is gzip'ed and written as 7-bit text (text7.py); the page's script (templates/browser.js) undoes it
with the browser's own DecompressionStream. ``unpack`` is the inverse, for tests and tools.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import text7

PER_CHUNK = 200  # conversations per turns chunk: opening one inflates ~0.5 MB at most in a large report

# a word with the one space before it, or a run of other characters (". ", "), ", "\n\n"): every character is in
# exactly one token. Runs, not single characters: fewer tokens to find and join (the tokenizer was half of packing)
TOKEN = re.compile(r" ?\w+|\W+")


def varint(n: int) -> bytes:
    """n in 7-bit groups, least significant first, the high bit set on all but the last."""
    out = bytearray()
    while n >= 128:
        out.append(n & 127 | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


class Vocabulary(dict[str, bytes]):
    """Token -> its index as a varint; a token is added the first time it is seen (so frequent ones, met early,
    get one-byte indices, and nothing has to hold the whole text to count them first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: list[str] = []

    def __missing__(self, token: str) -> bytes:
        code = self[token] = varint(len(self.tokens))
        self.tokens.append(token)
        return code

    def encode(self, text: str) -> bytes:
        return b"".join(map(self.__getitem__, TOKEN.findall(text)))


class Stream:
    """One gzip stream fed text piece by piece (never the whole JSON at once), written as 7-bit text at the end."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: gzip, no date; 9 is 2 % smaller, slower
        self.parts: list[bytes] = []

    def put(self, text: str) -> None:
        self.parts.append(self.packer.compress(self.vocabulary.encode(text)))

    def close(self) -> str:
        self.parts.append(self.packer.flush())
        return text7.encode(b"".join(self.parts))


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
    """Each conversation is encoded and compressed as it comes: neither the whole JSON nor every view is held.
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
            chunks.append(chunk.close())
            chunk = Stream(vocabulary)
        first = (n - 1) % per_chunk == 0
        listed.put(("" if n == 1 else ",") + dumps(listing(c)))
        turns = [{**t, "contexts": [ref(x) for x in t["contexts"]]} for t in c["turns"]]
        chunk.put(("[" if first else ",") + dumps(turns))
    if n:
        chunk.put("]")
        chunks.append(chunk.close())
    listed.put("]")
    contexts = Stream(vocabulary)
    contexts.put(dumps(list(texts)))
    packed = Packed("", listed.close(), contexts.close(), chunks, per_chunk, n)
    words = gzip.compress(dumps(vocabulary.tokens).encode("utf-8"), compresslevel=9, mtime=0)
    packed.vocabulary = text7.encode(words)
    return packed


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
