"""The reference RAG's rerank stage: retrieve rerank_candidates, reorder, keep top_k; an LLM reranker's wrong-shape
answer keeps the retrieval order and is recorded (reply, ledger fault), never silently used or dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from ragdive.cli.serve_rag import build_app
from ragdive.config import ReferenceTargetConfig, load_config
from ragdive.config.models import ModelSpec
from ragdive.corpus import load_documents
from ragdive.models import Model, ScriptedModel
from ragdive.targets.reference import ReferenceRAG
from ragdive.targets.reference.rerank import checked_ranking

from .conftest import HashEmbedder, write_config

QUESTION = "Which bees rule a colony and how many bees live in one?"


def generator(*rankings: Any, profile: str | None = None) -> tuple[ScriptedModel, Model]:
    """A scripted target model: the queued outputs answer the rerank calls, then "generated answer"."""
    backend = ScriptedModel("scripted/generator", responder=lambda messages: "generated answer")
    backend.enqueue(*rankings)
    spec = ModelSpec(model="scripted/generator", prompt_profile=profile)  # type: ignore[arg-type]
    return backend, Model(backend, role="target", spec=spec)


def rag(corpus: Path, tmp_path: Path, model: Model, embedder: HashEmbedder | None = None, **knobs: Any) -> ReferenceRAG:
    config = ReferenceTargetConfig(index_dir=str(tmp_path / "index"), chunk_size=16, chunk_overlap=2, **knobs)
    return ReferenceRAG(config, load_documents(corpus), model, embedder=embedder or HashEmbedder())


async def test_without_rerank_retrieval_gives_top_k(corpus: Path, tmp_path: Path) -> None:
    _, model = generator()
    reply = await rag(corpus, tmp_path, model, top_k=2).answer(QUESTION, [])
    assert len(reply.contexts) == 2 and "rerank" not in reply.raw


async def test_the_embedder_reranks_candidates_by_cosine_to_the_query(corpus: Path, tmp_path: Path) -> None:
    _, model = generator()
    embedder = HashEmbedder()
    plain = rag(corpus, tmp_path, model, embedder, top_k=4)
    candidates = plain.retrieve(QUESTION, 4)
    cosines = [float(embedder.passages([c.text])[0] @ embedder.query(QUESTION)) for c in candidates]
    expected = [candidates[i].id for i in np.argsort(-np.array(cosines), kind="stable")[:2]]

    target = rag(corpus, tmp_path, model, embedder, top_k=2, rerank="embedder", rerank_candidates=4)
    calls = embedder.calls
    reply = await target.answer(QUESTION, [])
    assert [c.id for c in reply.contexts] == expected
    assert [c.score for c in reply.contexts] == pytest.approx(sorted(cosines, reverse=True)[:2])
    assert reply.raw["rerank"] == {"method": "embedder", "fallback": None}
    assert embedder.calls == calls + 1  # the candidates, once
    await target.answer(QUESTION, [])
    assert embedder.calls == calls + 1  # seen candidates keep their vectors
    assert "rerank=embedder/4" in target.describe()


async def test_a_dense_index_lends_its_vectors_to_the_embedder_reranker(corpus: Path, tmp_path: Path) -> None:
    _, model = generator()
    embedder = HashEmbedder()
    target = rag(corpus, tmp_path, model, embedder, retriever="dense", top_k=1, rerank="embedder", rerank_candidates=3)
    calls = embedder.calls
    reply = await target.answer(QUESTION, [])
    assert embedder.calls == calls and reply.contexts[0].source == "bees"


async def test_the_llm_reranker_orders_candidates_through_the_target_model(corpus: Path, tmp_path: Path) -> None:
    backend, model = generator(json.dumps({"ranking": [3, 1, 2]}))
    target = rag(corpus, tmp_path, model, top_k=2, rerank="llm", rerank_candidates=3)
    candidates = target.retrieve(QUESTION, 3)
    reply = await target.answer(QUESTION, [])
    assert [c.id for c in reply.contexts] == [candidates[2].id, candidates[0].id]
    assert reply.raw["rerank"] == {"method": "llm", "fallback": None}
    rerank_call, answer_call = backend.calls
    prompt = rerank_call.messages[-1].content
    assert f"Query: {QUESTION}" in prompt and all(f"[{i}] {c.text}" in prompt for i, c in enumerate(candidates, 1))
    assert rerank_call.schema is not None and answer_call.schema is None
    assert reply.answer == "generated answer"


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("the second passage is best", "not usable"),  # not JSON, twice (the model layer's corrective retry)
        (json.dumps({"ranking": [7, 1]}), "not between 1 and 3"),
        (json.dumps({"ranking": [2, 2]}), "names a passage twice"),
        (json.dumps({"ranking": [2]}), "2 are needed"),
    ],
)
async def test_a_wrong_shape_answer_keeps_the_retrieval_order_and_is_recorded(
    corpus: Path, tmp_path: Path, answer: str, why: str
) -> None:
    valid_json = answer.startswith("{")  # the schema holds: no corrective retry is asked for
    _, model = generator(*([answer] if valid_json else [answer, answer]))
    target = rag(corpus, tmp_path, model, top_k=2, rerank="llm", rerank_candidates=3)
    retrieved = [c.id for c in target.retrieve(QUESTION, 2)]
    reply = await target.answer(QUESTION, [])
    assert [c.id for c in reply.contexts] == retrieved
    fallback = reply.raw["rerank"]["fallback"]
    assert why in fallback and "retrieval order kept" in fallback
    (line,) = [line for line in model.context.ledger.lines() if line.role == "target"]
    assert line.faults.get("unusable_output", 0) >= 1  # in the manifest's spend, per role and model
    assert reply.answer == "generated answer"  # the turn is still answered


async def test_a_base_profile_reranker_gets_the_few_shot_prompt_and_a_bounded_schema(
    corpus: Path, tmp_path: Path
) -> None:
    backend, model = generator(json.dumps({"ranking": [2, 1]}), profile="base")
    target = rag(corpus, tmp_path, model, top_k=2, rerank="llm", rerank_candidates=3)
    await target.answer(QUESTION, [])
    rerank_call = backend.calls[0]
    roles = [m.role for m in rerank_call.messages]
    assert roles[:3] == ["system", "user", "assistant"] and '{"ranking": [2, 3, 1]}' in rerank_call.messages[2].content
    ranking = rerank_call.schema.model_json_schema()["properties"]["ranking"]  # type: ignore[union-attr]
    assert ranking["minItems"] == ranking["maxItems"] == 2


def test_checked_ranking_and_config() -> None:
    assert checked_ranking([3, 1, 2], 3, 2) == [2, 0]
    with pytest.raises(ValueError, match="between 1 and 3"):
        checked_ranking([0, 1], 3, 2)
    with pytest.raises(ValueError, match="rerank_candidates must be at least top_k"):
        ReferenceTargetConfig(top_k=5, rerank="llm", rerank_candidates=3)
    assert ReferenceTargetConfig(top_k=5, rerank_candidates=3).rerank == "none"  # no reranker: K is not used
    with pytest.raises(ValueError):
        ReferenceTargetConfig(rerank="cross-encoder")  # type: ignore[arg-type]


async def test_serve_rag_returns_the_rerank_outcome(tmp_path: Path, corpus: Path) -> None:
    """The echo double answers the rerank request with prose: the reply says the retrieval order was kept."""
    config = write_config(tmp_path / "exp.yaml", corpus, tmp_path / "index", rerank="llm", rerank_candidates=3)
    app, _ = build_app(load_config(config))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://rag") as client:
        reply = (await client.post("/chat", json={"message": QUESTION, "history": []})).json()
    assert len(reply["contexts"]) == 2 and reply["rerank"]["method"] == "llm"
    assert "retrieval order kept" in reply["rerank"]["fallback"]
