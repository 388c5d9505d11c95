"""The llamaindex target with real llama-index-core: a query engine and chat engines (instance and factory) over a
tiny in-memory index with the library's mock LLM and embeddings; source nodes become contexts."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra (llama-index-core) is not installed")

from ragdive.cli.main import main  # noqa: E402
from ragdive.config import LlamaIndexTargetConfig, load_config  # noqa: E402
from ragdive.errors import ConfigError, TargetError  # noqa: E402
from ragdive.store import RunStore  # noqa: E402
from ragdive.targets import DialogueState  # noqa: E402
from ragdive.targets.factory import build_target  # noqa: E402

from .llamaindex_engines import DOCS  # noqa: E402

ENGINES = "tests.targets.llamaindex_engines"


def target(engine: str, **options: object):  # type: ignore[no-untyped-def]
    return build_target(LlamaIndexTargetConfig(engine=f"{ENGINES}:{engine}", options=options))


async def test_query_engine_source_nodes_become_contexts() -> None:
    t = target("query_engine")
    assert t.describe() == f"llamaindex query engine {ENGINES}:query_engine"
    reply = await t.respond(DialogueState("c1"), "When did the harbour museum open?")
    assert "The harbour museum opened in 1954." in reply.answer  # the mock LLM echoes its prompt, contexts in it
    assert len(reply.contexts) == 2
    by_source = {c.source: c for c in reply.contexts}
    assert set(by_source) == {"harbour", "tea"}  # the source document of each node
    harbour = by_source["harbour"]
    assert harbour.text == DOCS[0].text and harbour.id and harbour.score is not None
    assert harbour.model_dump()["metadata"] == {"source": "harbour.md", "section": "history"}


async def test_chat_engine_factory_keeps_a_memory_per_conversation() -> None:
    t = target("make_chat_engine", top_k=1)
    one, two = DialogueState("one"), DialogueState("two")
    await t.start(one)
    await t.start(two)
    await t.respond(one, "When did the museum open?")
    await t.respond(one, "And what does it keep?")
    await t.respond(two, "How hot should tea be?")
    assert len(one.session["engine"].chat_history) == 4
    assert [m.content for m in two.session["engine"].chat_history][0] == "How hot should tea be?"
    assert one.session["engine"] is not two.session["engine"]


async def test_a_single_chat_engine_is_given_each_conversations_history() -> None:
    from ragdive.models import Message

    t = target("chat_engine")
    state = DialogueState(
        "a",
        history=[
            Message(role="user", content="Tell me about tea."),
            Message(role="assistant", content="Brew it at 80 degrees."),
        ],
    )
    reply = await t.respond(state, "For how long?")
    assert reply.contexts and reply.answer
    from .llamaindex_engines import chat_engine

    assert [m.content for m in chat_engine.chat_history][:2] == ["Tell me about tea.", "Brew it at 80 degrees."]


def test_wrong_objects_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="expected a query engine, a chat engine, or a factory"):
        target("not_an_engine")
    with pytest.raises(ConfigError, match="has no attribute"):
        target("missing")
    with pytest.raises(ConfigError, match="options are given, but it is not a factory"):
        target("query_engine", top_k=2)
    assert issubclass(TargetError, Exception)


def test_run_from_yaml_with_a_llamaindex_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "harbour.md").write_text(DOCS[0].text + "\n", encoding="utf-8")
    offline = "ragdive.testing.offline"
    roles = "\n".join(
        f"  {r}: {{model: scripted/{r}, options: {{responder: '{offline}:{r}'}}}}"
        for r in ("user", "validator", "judge")
    )
    config = tmp_path / "experiment.yaml"
    config.write_text(
        f"name: llamaindex\noutput_dir: {tmp_path / 'runs'}\ncache: {{dir: {tmp_path / 'cache'}}}\n"
        f"models:\n{roles}\ncorpus: {{path: {corpus}}}\n"
        "simulation: {conversations: 2, max_turns: 2, concurrency: 2}\n"
        f"target: {{type: llamaindex, engine: '{ENGINES}:make_chat_engine', options: {{top_k: 2}}}}\n"
        "evaluation: {metrics: [correctness, context_recall]}\n",
        encoding="utf-8",
    )
    assert load_config(config).target.type == "llamaindex"  # type: ignore[union-attr]
    assert main(["run", str(config)]) == 0
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    conversations = store.current_conversations()
    assert len(conversations) == 2 and all(len(c.turns) == 2 for c in conversations)
    assert all(len(t.contexts) == 2 and t.contexts[0].source for c in conversations for t in c.turns)
    recall = [s.value for s in store.current_scores() if s.metric == "context_recall"]
    assert recall and all(v == 1.0 for v in recall)  # the harbour text is retrieved, so the ground truth is in it
