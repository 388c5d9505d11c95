"""The dense index is incremental: a chunk whose text (and model) was embedded before is never embedded again."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragdive.corpus import load_documents
from ragdive.targets.reference import Index
from ragdive.targets.reference.embedding_cache import EmbeddingCache, content_key

from .conftest import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """Records every text it was asked to embed."""

    def __init__(self, name: str = "test/hash-bow-64") -> None:
        super().__init__()
        self.name = name
        self.seen: list[str] = []

    def passages(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super().passages(texts)


def build(corpus: Path, root: Path, embedder: CountingEmbedder) -> Index:
    index = Index.open(load_documents(corpus), size=24, overlap=4, root=root)
    index.dense(embedder)
    return index


def test_editing_one_document_re_embeds_only_its_chunks(corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    first_embedder = CountingEmbedder()
    first = build(corpus, root, first_embedder)
    assert sorted(first_embedder.seen) == sorted(set(first.texts)) and first.embedded == len(set(first.texts))

    (corpus / "bees.md").write_text("# Bees\n\nBees make honey in hives. A queen leads them.", encoding="utf-8")
    embedder = CountingEmbedder()
    edited = build(corpus, root, embedder)
    assert edited.folder != first.folder and "dense" in edited.built
    bees = {c.text for c in edited.chunks if c.document_id.startswith("bees")}
    assert set(embedder.seen) == bees - set(first.texts)
    assert 0 < edited.embedded == len(embedder.seen) < len(edited.chunks)
    # the assembled index is what embedding every chunk from scratch gives
    scratch = CountingEmbedder()
    fresh = build(corpus, tmp_path / "fresh", scratch)
    np.testing.assert_array_equal(np.load(next(edited.folder.glob("dense-*.npy"))), fresh.dense(scratch).vectors)


def test_another_model_or_setting_is_another_cache_key(corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    build(corpus, root, CountingEmbedder("test/a"))
    other = CountingEmbedder("test/a|passage: ")
    index = build(corpus, root, other)
    assert index.embedded == len(set(index.texts)) and len(other.seen) == len(set(index.texts))
    assert content_key("m", "text") != content_key("m2", "text") != content_key("m", "text ")


def test_a_build_interrupted_half_way_keeps_the_vectors_it_finished(corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"

    class Failing(CountingEmbedder):
        def passage_batches(self, texts):  # type: ignore[no-untyped-def]
            for i in range(0, len(texts), 2):
                if i >= 4:
                    raise KeyboardInterrupt
                yield [i, i + 1][: len(texts) - i], self.passages(texts[i : i + 2])

    docs = load_documents(corpus)
    index = Index.open(docs, size=24, overlap=4, root=root)
    try:
        index.dense(Failing())
    except KeyboardInterrupt:
        pass
    assert not list(index.folder.glob("dense-*.npy"))
    cache = EmbeddingCache(next(root.glob("embeddings-*.sqlite")))
    assert len(cache) == 4
    cache.close()
    resumed = CountingEmbedder()
    again = Index.open(docs, size=24, overlap=4, root=root)
    again.dense(resumed)
    assert again.embedded == len(set(again.texts)) - 4 == len(resumed.seen)
