"""The packaged demo experiment: readable from the installed package, offline, writing only under --output."""

from __future__ import annotations

from pathlib import Path

from ragdive.config import ROLES
from ragdive.corpus import load_documents
from ragdive.demo import demo_config


def test_the_demo_reads_the_packaged_corpus_and_writes_under_the_output(tmp_path: Path) -> None:
    config = demo_config(tmp_path / "demo")
    assert config.corpus is not None and config.target is not None and config.target.type == "reference"
    documents = load_documents(config.corpus.path)
    assert len(documents) == 5 and all(len(d.text.split()) > 80 for d in documents)
    assert any("boil-dry protection" in d.text for d in documents)
    assert config.target.retriever == "bm25"
    for role in ROLES:  # every role on the packaged model: no network, no key
        spec = config.models.for_role(role)
        assert spec is not None and spec.model == "llamacpp/default"
    # nothing is written into the installed package
    assert Path(config.output_dir) == tmp_path / "demo"
    assert Path(config.cache.dir).is_relative_to(tmp_path / "demo")
    assert Path(config.target.index_dir).is_relative_to(tmp_path / "demo")
    sim = config.simulation
    assert (sim.conversations, sim.max_turns, sim.max_attempts, sim.on_exhausted) == (2, 2, 2, "accept")
