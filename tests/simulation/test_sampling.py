from __future__ import annotations

from collections import Counter

import pytest

from ragdive.corpus.sampling import SeedSampler, shared_terms
from ragdive.errors import ConfigError
from ragdive.records import Document

TOPICS = {
    "volcano": "magma eruption lava crater ash volcano",
    "ocean": "waves tide coral reef salt ocean",
    "space": "rocket orbit moon astronaut launch space",
}


def corpus() -> list[Document]:
    docs = []
    for topic, words in TOPICS.items():
        for i in range(3):
            docs.append(Document(id=f"{topic}-{i}", text=f"Article {i} about {words}. More on {words.split()[i]}."))
    return docs


def test_single_sampling_is_seeded_even_and_prefix_stable() -> None:
    docs = corpus()
    sampler = SeedSampler(docs, seed=7)
    first = [sampler.for_conversation(i)[0].id for i in range(18)]
    assert first == [SeedSampler(docs, seed=7).for_conversation(i)[0].id for i in range(18)]
    assert first != [SeedSampler(docs, seed=8).for_conversation(i)[0].id for i in range(18)]
    assert set(Counter(first[:9]).values()) == {1}  # every document once before any twice
    assert set(Counter(first).values()) == {2}


def test_related_groups_share_a_topic() -> None:
    sampler = SeedSampler(corpus(), seed=1, mode="related", group_size=3)
    for i in range(9):
        group = sampler.for_conversation(i)
        assert len(group) == 3 and len({d.id for d in group}) == 3
        assert len({d.id.split("-")[0] for d in group}) == 1, [d.id for d in group]


def test_shared_terms_are_common_content_words() -> None:
    a = Document(id="a", text="The lighthouse of Veldmark stands at the harbour entrance.")
    b = Document(id="b", text="Veldmark harbour was enlarged; the lighthouse was repainted.")
    assert set(shared_terms([a, b])) == {"lighthouse", "veldmark", "harbour"}
    assert shared_terms([a]) == []


def test_related_sampling_needs_enough_documents() -> None:
    with pytest.raises(ConfigError, match="at least 3 documents"):
        SeedSampler(corpus()[:2], seed=0, mode="related", group_size=3)
