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


def generic_corpus() -> list[Document]:
    """Articles on unrelated subjects that all use the same generic words (as encyclopaedia articles do)."""
    filler = "It was often used, due to its main role, and was first made among others."
    subjects = ["glacier", "violin", "railway", "orchid", "comet", "bakery", "harp", "canal", "tundra", "opera"]
    return [Document(id=s, text=f"The {s} is described here. {filler}") for s in subjects]


def test_shared_terms_are_distinctive_words_of_the_group_weighted_by_idf() -> None:
    a = Document(id="a", text="The lighthouse of Veldmark stands at the harbour entrance. It was often used.")
    b = Document(id="b", text="Veldmark harbour was enlarged; the lighthouse was repainted. It was often used.")
    corpus = [a, b, *generic_corpus()]
    sampler = SeedSampler(corpus, seed=0)
    # "often" and "used" are in every article: not a link between these two
    assert set(sampler.shared_terms([a, b])) == {"lighthouse", "veldmark", "harbour"}
    assert sampler.shared_terms([a]) == []


def test_unrelated_documents_sharing_only_generic_words_get_no_hint() -> None:
    docs = generic_corpus()
    sampler = SeedSampler(docs, seed=0)
    assert sampler.shared_terms(docs[:2]) == []  # glacier and violin share only "often, used, due, main..."
    # without the corpus's document frequencies nothing is distinctive: the hint is left out, never guessed
    assert shared_terms(docs[:2]) == []


def test_shared_words_rank_by_idf_and_a_word_common_in_the_corpus_is_left_out() -> None:
    a = Document(id="a", text="Quartz, basalt and granite.")
    b = Document(id="b", text="Granite, basalt and quartz.")
    rocks = ["basalt"] + ["granite"] * 3
    others = [Document(id=f"o{i}", text=f"Rock {i}: {rocks[i] if i < len(rocks) else 'none'}.") for i in range(28)]
    sampler = SeedSampler([a, b, *others], seed=0)
    # of 30 documents: quartz in 2, basalt in 3 (at most max(2, 30/10) = 3 count as distinctive), granite in 5
    assert sampler.shared_terms([a, b]) == ["quartz", "basalt"]


def test_related_sampling_needs_enough_documents() -> None:
    with pytest.raises(ConfigError, match="at least 3 documents"):
        SeedSampler(corpus()[:2], seed=0, mode="related", group_size=3)


def test_a_function_word_is_never_a_link_even_when_a_small_corpus_makes_it_rare() -> None:
    # a capable model's run on 4 articles was told a bee article and a canal article "share run, side, workers,
    # very": in 4 documents IDF cannot tell "very" (in 2) from a real link, so function words are left out by name
    bees = Document(id="bees", text="Bees dance; the dance has very short runs. Workers follow the dance.")
    canal = Document(id="canal", text="The canal had a very high death rate among workers. The canal opened.")
    others = [Document(id=f"o{i}", text=f"Trench number {i} lies deep in the ocean.") for i in range(2)]
    sampler = SeedSampler([bees, canal, *others], seed=0)
    terms = sampler.shared_terms([bees, canal])
    assert "very" not in terms and "among" not in terms
    assert terms == ["workers"]  # a content word still links them; the prompt says not to invent a connection
