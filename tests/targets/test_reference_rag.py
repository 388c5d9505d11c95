from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.config import ReferenceTargetConfig
from ragdive.corpus import load_documents
from ragdive.errors import ConfigError, ModelError, TargetError
from ragdive.models import Message, Model, ScriptedModel
from ragdive.targets import DialogueState, build_target
from ragdive.targets.reference import ReferenceRAG, select_history

from .conftest import HashEmbedder

HISTORY = [
    Message(role="user", content="Q1 about bees?"),
    Message(role="assistant", content="A1"),
    Message(role="user", content="Q2 about rivers?"),
    Message(role="assistant", content="A2"),
    Message(role="user", content="Q3 about chess?"),
    Message(role="assistant", content="A3"),
]


def scripted(*outputs: str) -> tuple[ScriptedModel, Model]:
    backend = ScriptedModel("scripted/generator", responder=lambda messages: "generated answer")
    backend.enqueue(*outputs)
    return backend, Model(backend, role="target")


def rag(corpus: Path, tmp_path: Path, model: Model, **knobs: object) -> ReferenceRAG:
    config = ReferenceTargetConfig(index_dir=str(tmp_path / "index"), chunk_size=64, chunk_overlap=8, **knobs)
    return ReferenceRAG(config, load_documents(corpus), model, embedder=HashEmbedder())


def test_select_history_policies() -> None:
    assert select_history(HISTORY, "none") == []
    assert select_history(HISTORY, "first") == [HISTORY[0]]
    assert select_history(HISTORY, "full") == HISTORY
    assert select_history(HISTORY, "last:1") == HISTORY[5:]  # utterances, as the paper's "last 3" counts them
    assert select_history(HISTORY, "last:3") == HISTORY[3:]
    assert select_history(HISTORY, "last:9") == HISTORY
    with pytest.raises(ConfigError):
        select_history(HISTORY, "last:0")


def test_last_n_names_its_unit_utterances_or_exchanges() -> None:
    assert select_history(HISTORY, "last:3u") == select_history(HISTORY, "last:3") == HISTORY[3:]
    assert select_history(HISTORY, "last:1x") == HISTORY[4:]  # a question and its answer
    assert select_history(HISTORY, "last:2x") == HISTORY[2:]
    assert select_history(HISTORY, "last:5x") == HISTORY
    unanswered = [*HISTORY, Message(role="user", content="Q4?")]  # a turn the target failed on
    assert select_history(unanswered, "last:1x") == unanswered[-1:]
    for wrong in ("last:3y", "last:x", "last:0x"):
        with pytest.raises(ConfigError, match="last:Nx"):
            select_history(HISTORY, wrong)
        with pytest.raises(ValueError):
            ReferenceTargetConfig(history=wrong)
    assert ReferenceTargetConfig(history="last:2x").history == "last:2x"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("none", []),
        ("first", ["Q1 about bees?"]),
        ("last:1", ["A3"]),
        ("last:3", ["A2", "Q3 about chess?", "A3"]),
        ("last:1x", ["Q3 about chess?", "A3"]),
        ("full", [m.content for m in HISTORY]),
    ],
)
async def test_each_history_policy_changes_what_the_generator_receives(
    corpus: Path, tmp_path: Path, policy: str, expected: list[str]
) -> None:
    backend, model = scripted()
    reply = await rag(corpus, tmp_path, model, history=policy).answer("How many squares has a chess board?", HISTORY)
    assert reply.answer == "generated answer"
    (call,) = backend.calls
    system, *middle, question = call.messages
    assert system.role == "system" and "passages" in system.content
    assert [m.content for m in middle] == expected
    assert question.role == "user" and question.content.endswith("Question: How many squares has a chess board?")
    # the passages shown are exactly the retrieved contexts, in rank order
    for number, context in enumerate(reply.contexts, start=1):
        assert f"[{number}] {context.text}" in question.content


@pytest.mark.parametrize("k", [1, 2, 3])
async def test_top_k_sets_the_number_of_contexts(corpus: Path, tmp_path: Path, k: int) -> None:
    backend, model = scripted()
    # every document matches one word of the query, so each retriever has 4 candidates
    reply = await rag(corpus, tmp_path, model, top_k=k).answer("volcano, bees, river or chess?", [])
    assert len(reply.contexts) == k
    shown = backend.calls[0].messages[-1].content
    assert f"[{k}] " in shown and f"[{k + 1}] " not in shown  # the generator sees exactly passages [1]..[k]


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
async def test_retrievers_find_the_right_document(corpus: Path, tmp_path: Path, retriever: str) -> None:
    _, model = scripted()
    reply = await rag(corpus, tmp_path, model, retriever=retriever, top_k=2).answer(
        "Which volcano in Sicily erupted in 2021?", []
    )
    top = reply.contexts[0]
    assert top.source == "volcanoes" and top.id and top.id.startswith("volcanoes#")
    assert "Etna" in top.text and top.score is not None
    scores = [c.score for c in reply.contexts]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


async def test_query_rewrite_goes_through_the_target_model(corpus: Path, tmp_path: Path) -> None:
    backend, model = scripted("Which volcano in Sicily erupted?\n", "it is Etna")
    history = [Message(role="user", content="Tell me about Mount Etna"), Message(role="assistant", content="...")]
    reply = await rag(corpus, tmp_path, model, rewrite_query=True).answer("when did it erupt?", history)
    rewrite_call, answer_call = backend.calls
    assert "Tell me about Mount Etna" in rewrite_call.text and "user: when did it erupt?" in rewrite_call.text
    assert reply.raw["query"] == "Which volcano in Sicily erupted?"
    assert reply.contexts[0].source == "volcanoes"
    assert answer_call.messages[-1].content.endswith("Question: when did it erupt?")
    assert reply.answer == "it is Etna"


async def test_first_turn_is_not_rewritten(corpus: Path, tmp_path: Path) -> None:
    backend, model = scripted()
    await rag(corpus, tmp_path, model, rewrite_query=True).answer("What is a volcano?", [])
    assert len(backend.calls) == 1


async def test_generator_failure_is_a_target_error(corpus: Path, tmp_path: Path) -> None:
    _, model = scripted()
    model.backend.enqueue(ModelError("rate limited", provider="scripted", status=429))  # type: ignore[attr-defined]
    with pytest.raises(TargetError, match="rate limited"):
        await rag(corpus, tmp_path, model).answer("What is a volcano?", [])


def test_index_is_persisted_and_rebuilt_only_when_its_inputs_change(corpus: Path, tmp_path: Path) -> None:
    _, model = scripted()
    first = rag(corpus, tmp_path, model, retriever="hybrid")
    assert first.index.built == ["chunks", "bm25", "dense"]
    again = rag(corpus, tmp_path, model, retriever="hybrid")
    assert again.index.built == [] and again.index.folder == first.index.folder
    assert [c.text for c in again.index.chunks] == [c.text for c in first.index.chunks]
    # another chunking is another index
    config = ReferenceTargetConfig(index_dir=str(tmp_path / "index"), chunk_size=32, chunk_overlap=0)
    other = ReferenceRAG(config, load_documents(corpus), model)
    assert other.index.built == ["chunks", "bm25"] and other.index.folder != first.index.folder
    # a changed document is another index
    (corpus / "bees.md").write_text("# Bees\n\nBees make honey.", encoding="utf-8")
    changed = rag(corpus, tmp_path, model)
    assert changed.index.built == ["chunks", "bm25"] and changed.index.folder != first.index.folder


async def test_build_target_in_process_with_corpus_override(corpus: Path, tmp_path: Path) -> None:
    backend, model = scripted()
    config = ReferenceTargetConfig(index_dir=str(tmp_path / "i"), history="last:2")
    target = build_target(config, corpus=str(corpus), model=model)
    state = DialogueState(id="c1", history=HISTORY)
    reply = await target.respond(state, "Who rules a bee colony?")
    assert reply.contexts[0].source == "bees"
    assert [m.content for m in backend.calls[0].messages[1:-1]] == ["Q3 about chess?", "A3"]
    assert "reference bm25 k=4 history=last:2" in target.describe()

    override = ReferenceTargetConfig(index_dir=str(tmp_path / "i"), corpus=str(corpus / "missing"))
    with pytest.raises(ConfigError, match="does not exist"):
        build_target(override, corpus=str(corpus), model=model)
    with pytest.raises(ConfigError, match="no generator model"):
        build_target(config, corpus=str(corpus))
    with pytest.raises(ConfigError, match="no corpus"):
        build_target(config, model=model)


def test_reference_config_rejects_inconsistent_knobs() -> None:
    with pytest.raises(ValueError, match="chunk_overlap"):
        ReferenceTargetConfig(chunk_size=32, chunk_overlap=32)
    with pytest.raises(ValueError, match="embedding_base_url"):
        ReferenceTargetConfig(embedding="openai/text-embedding-3-small")
    with pytest.raises(ValueError):
        ReferenceTargetConfig(history="last:0")


async def test_bm25_stems_words_and_returns_nothing_without_a_shared_term(corpus: Path, tmp_path: Path) -> None:
    backend, model = scripted()
    target = rag(corpus, tmp_path, model, top_k=3)
    stemmed = await target.answer("Who rules a bee colony?", [])  # the text says "bees", "colonies", "ruled"
    assert [c.source for c in stemmed.contexts] == ["bees"]
    nothing = await target.answer("Quantum chromodynamics?", [])
    assert nothing.contexts == [] and "Passages:\n\nQuestion: Quantum" in backend.calls[-1].messages[-1].content


async def test_a_base_profile_generator_gets_the_few_shot_answer_prompt_and_stops_at_the_line_end(
    corpus: Path, tmp_path: Path
) -> None:
    from ragdive.config.models import ModelSpec

    backend = ScriptedModel("scripted/generator", responder=lambda messages: "generated answer")
    model = Model(backend, role="target", spec=ModelSpec(model="scripted/generator", prompt_profile="base"))
    reply = await rag(corpus, tmp_path, model, history="last:2").answer("How many squares has a chess board?", HISTORY)
    (call,) = backend.calls
    system, example_q, example_a, *middle, question = call.messages
    assert system.role == "system" and (example_q.role, example_a.role) == ("user", "assistant")
    assert "Aero fan" in example_q.content and example_a.content == "Rinse the filter every two weeks."
    assert [m.content for m in middle] == ["Q3 about chess?", "A3"]  # the history sits between example and question
    assert question.content.endswith("Question: How many squares has a chess board?")
    for number, context in enumerate(reply.contexts, start=1):
        assert f"[{number}] {context.text}" in question.content
    assert call.params is not None and call.params.stop == ["\n"]


@pytest.mark.parametrize(
    ("policy", "query"),
    [
        ("full", "Tell me about Etna in Sicily\nWhen did it last erupt?"),
        ("first", "Tell me about Etna in Sicily\nWhen did it last erupt?"),
        ("none", "When did it last erupt?"),
        ("last:1u", "When did it last erupt?"),  # the one utterance kept is the answer: no user message
        ("last:1x", "Tell me about Etna in Sicily\nWhen did it last erupt?"),
    ],
)
async def test_the_history_policy_reaches_the_retriever(corpus: Path, tmp_path: Path, policy: str, query: str) -> None:
    # the paper's "no history" lowers context precision: a follow-up without its subject retrieves worse
    _, model = scripted()
    history = [Message(role="user", content="Tell me about Etna in Sicily"), Message(role="assistant", content="A")]
    reply = await rag(corpus, tmp_path, model, history=policy).answer("When did it last erupt?", history)
    assert reply.raw["query"] == query
    if policy not in ("none", "last:1u"):
        assert reply.contexts[0].source == "volcanoes"
    alone = await rag(corpus, tmp_path, model, history=policy, retrieval_history=False).answer(
        "When did it last erupt?", history
    )
    assert alone.raw["query"] == "When did it last erupt?"
