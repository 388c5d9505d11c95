from __future__ import annotations

import pytest

from ragdive.config import LangChainTargetConfig
from ragdive.errors import ConfigError, TargetError
from ragdive.models import Message
from ragdive.targets import DialogueState, build_target

pytest.importorskip("langchain_core")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402

SEEN: list[dict[str, object]] = []


def _chain(payload: dict[str, object]) -> dict[str, object]:
    SEEN.append(payload)
    docs = [Document(page_content="Etna is in Sicily.", metadata={"source": "volcanoes.md", "score": 1.5}, id="v#0")]
    return {"answer": f"answer to {payload['question']}", "context": docs}


chain = RunnableLambda(_chain)
text_chain = RunnableLambda(lambda payload: "just text")
broken_chain = RunnableLambda(lambda payload: 1 / 0)
not_a_runnable = object()


def make_chain(prefix: str) -> RunnableLambda:
    return RunnableLambda(lambda payload: {"answer": prefix + payload["input"]})


async def test_runnable_answer_and_source_documents() -> None:
    target = build_target(
        LangChainTargetConfig(runnable="tests.targets.test_langchain_target:chain", input_key="question")
    )
    state = DialogueState(id="c", history=[Message(role="user", content="hi"), Message(role="assistant", content="yo")])
    reply = await target.respond(state, "where is Etna?")
    assert reply.answer == "answer to where is Etna?"
    (context,) = reply.contexts
    assert (context.text, context.source, context.id, context.score) == (
        "Etna is in Sicily.",
        "volcanoes.md",
        "v#0",
        1.5,
    )
    assert SEEN[-1]["chat_history"] == [("user", "hi"), ("ai", "yo")]


async def test_other_result_shapes_and_failures() -> None:
    text = build_target(LangChainTargetConfig(runnable="tests.targets.test_langchain_target:text_chain"))
    assert (await text.respond(DialogueState(id="c"), "q")).answer == "just text"
    factory = build_target(
        LangChainTargetConfig(runnable="tests.targets.test_langchain_target:make_chain", options={"prefix": "> "})
    )
    assert (await factory.respond(DialogueState(id="c"), "q")).answer == "> q"
    broken = build_target(LangChainTargetConfig(runnable="tests.targets.test_langchain_target:broken_chain"))
    with pytest.raises(TargetError, match="ZeroDivisionError"):
        await broken.respond(DialogueState(id="c"), "q")
    with pytest.raises(ConfigError, match="not a Runnable"):
        build_target(LangChainTargetConfig(runnable="tests.targets.test_langchain_target:not_a_runnable"))


@pytest.mark.parametrize(
    ("runnable", "said"),
    [
        ("tests.targets.test_langchain_target", "langchain target 'tests.targets.test_langchain_target' must be"),
        ("tests.targets.no_such_module:chain", "langchain target: cannot import module"),
        ("tests.targets.test_langchain_target:chian", "langchain target: .* has no attribute 'chian'"),
    ],
)
def test_a_misnamed_runnable_is_one_config_error_naming_the_target_kind(runnable: str, said: str) -> None:
    """The shared `module:attribute` resolver (ragdive.importing) says which kind of target it was resolving."""
    with pytest.raises(ConfigError, match=said):
        build_target(LangChainTargetConfig(runnable=runnable))
