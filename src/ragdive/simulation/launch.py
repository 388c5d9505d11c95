"""The corpus as a simulation reads it: the sampler that draws each conversation's seed documents, and the seed
documents a config's conversations are drawn from. (Building a run's models, target and store is the pipeline's:
ragdive.pipeline.launch.)"""

from __future__ import annotations

from ..config import ExperimentConfig
from ..corpus import LoadedCorpus, SizeLimit, load_corpus
from ..corpus.sampling import SeedSampler
from ..errors import ConfigError
from ..records import Document


def seed_sampler(config: ExperimentConfig) -> tuple[LoadedCorpus, SeedSampler]:
    """The corpus as the simulation reads it, and the sampler that draws each conversation's seed documents."""
    corpus, sim = config.corpus, config.simulation
    assert corpus is not None
    size_limit = SizeLimit(corpus.max_document_tokens, corpus.on_oversize) if corpus.max_document_tokens else None
    loaded = load_corpus(
        corpus.path, format=corpus.format, limit=corpus.max_documents, encoding=corpus.encoding, size_limit=size_limit
    )
    documents = loaded.documents
    if sim.max_document_chars:
        documents = [d.model_copy(update={"text": d.text[: sim.max_document_chars]}) for d in documents]
    return loaded, SeedSampler(documents, seed=config.seed, mode=corpus.sampling, group_size=corpus.group_size)


def seed_documents(config: ExperimentConfig) -> list[Document]:
    """The seed documents the config's conversations are drawn from, each once, in the order conversations first
    use them. They do not depend on the repeat (repeats ask about the same documents, as the paper's Table 3
    needs), so a static arm can ask about exactly these."""
    if config.corpus is None:
        raise ConfigError("seed documents need a corpus: set corpus.path in the config")
    _, sampler = seed_sampler(config)
    seen: dict[str, Document] = {}
    for index in range(config.simulation.conversations):
        for document in sampler.for_conversation(index):
            seen.setdefault(document.id, document)
    return list(seen.values())
