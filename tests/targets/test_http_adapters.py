"""The http and openai-chat adapters against the reference RAG served by `ragdive serve-rag` in a real
subprocess on 127.0.0.1 (its generator is the echo test double, so answers show what the generator received)."""

from __future__ import annotations

import httpx
import pytest

from ragdive.config import HttpTargetConfig, OpenAIChatTargetConfig, validate_config
from ragdive.config.target import SessionStartConfig
from ragdive.errors import ConfigError, TargetError
from ragdive.models import Message
from ragdive.targets import DialogueState, build_target
from ragdive.targets.http import HttpTarget

HISTORY = [Message(role="user", content="Tell me about bees"), Message(role="assistant", content="They buzz.")]


async def test_http_stateless_sends_the_history_structurally(rag_server: str) -> None:
    config = HttpTargetConfig(
        url=f"{rag_server}/chat",
        body={"message": "{message}", "history": "{history}"},
        answer_path="answer",
        contexts_path="contexts",
    )
    target = build_target(config)
    try:
        reply = await target.respond(DialogueState(id="c1", history=HISTORY), 'Who rules a "colony"?\nQueen?')
    finally:
        await target.aclose()
    assert len(reply.contexts) == 2 and reply.contexts[0].source == "bees"
    assert reply.contexts[0].id and reply.contexts[0].score is not None
    # the echo generator shows the history arrived as messages, and the quoted, multi-line question intact
    assert "\n---\nuser: Tell me about bees\n---\nassistant: They buzz.\n---\n" in reply.answer
    assert reply.answer.endswith('Question: Who rules a "colony"?\nQueen?')
    # the retriever searched with the history's user messages before the question (a history-aware query)
    assert reply.raw["query"].endswith('\nWho rules a "colony"?\nQueen?') and reply.latency_s > 0


async def test_http_session_start_opens_a_thread_and_the_server_keeps_history(rag_server: str) -> None:
    config = HttpTargetConfig(
        url=f"{rag_server}/chat",
        body={"message": "{message}", "thread_id": "{session_id}"},
        session_start=SessionStartConfig(url=f"{rag_server}/sessions", id_path="thread_id"),
    )
    target = HttpTarget(config)
    state = DialogueState(id="conv-7")
    try:
        await target.start(state)
        thread = state.session["session_id"]
        assert isinstance(thread, str) and len(thread) == 32
        first = await target.respond(state, "Where does the Danube end?")
        second = await target.respond(state, "And the Nile?")  # no history sent: the server kept it
    finally:
        await target.aclose()
    assert state.session["session_id"] == thread and first.raw["thread_id"] == thread
    assert "user: Where does the Danube end?" not in first.answer.split("Question:")[0]
    assert "user: Where does the Danube end?" in second.answer
    assert "assistant: " + first.answer.splitlines()[0] in second.answer


async def test_http_conversation_id_sessions_are_separate(rag_server: str) -> None:
    target = build_target(HttpTargetConfig(url=f"{rag_server}/chat"))  # default body: message + conversation_id
    try:
        await target.respond(DialogueState(id="a"), "What is a volcano?")
        other = await target.respond(DialogueState(id="b"), "How many squares on a chess board?")
        same = await target.respond(DialogueState(id="a"), "Which one is in Sicily?")
    finally:
        await target.aclose()
    assert "What is a volcano?" not in other.answer
    assert "user: What is a volcano?" in same.answer


async def test_openai_chat_adapter_reads_answer_and_contexts(rag_server: str) -> None:
    config = OpenAIChatTargetConfig(base_url=f"{rag_server}/v1", system_prompt="ignored by the server")
    target = build_target(config)
    try:
        reply = await target.respond(
            DialogueState(id="c", history=HISTORY), "How many bees live in a colony ruled by a queen?"
        )
    finally:
        await target.aclose()
    assert reply.raw["object"] == "chat.completion"
    assert [c.source for c in reply.contexts][0] == "bees" and len(reply.contexts) == 2
    assert "user: Tell me about bees" in reply.answer and reply.answer.endswith(
        "How many bees live in a colony ruled by a queen?"
    )
    assert reply.contexts[0].text in reply.answer  # the passage shown to the generator is the returned context


async def test_openai_chat_without_contexts_field(rag_server: str) -> None:
    target = build_target(OpenAIChatTargetConfig(base_url=f"{rag_server}/v1", contexts_field=None))
    try:
        reply = await target.respond(DialogueState(id="c"), "What is the Danube?")
    finally:
        await target.aclose()
    assert reply.contexts == [] and "Danube" in reply.answer


async def test_server_rejects_bad_requests_with_a_reason(rag_server: str) -> None:
    target = build_target(HttpTargetConfig(url=f"{rag_server}/chat", body={"message": "{message}"}, max_retries=0))
    try:
        with pytest.raises(TargetError, match="HTTP 400") as info:
            await target.respond(DialogueState(id="c"), "hello")
    finally:
        await target.aclose()
    assert info.value.status == 400 and "thread_id / conversation_id" in (info.value.body or "")


# --- failures end as TargetError with the message kept -------------------------------------------------------


async def test_unreachable_target() -> None:
    from .conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/chat"
    target = build_target(HttpTargetConfig(url=url, max_retries=1, retry_backoff_s=0.01, timeout_s=2))
    try:
        with pytest.raises(TargetError, match="failed after 2 attempt") as info:
            await target.respond(DialogueState(id="c"), "hi")
    finally:
        await target.aclose()
    assert "ConnectError" in str(info.value) and info.value.status is None


async def test_500_is_retried_then_a_target_error_with_the_body(fault_server: str) -> None:
    target = build_target(HttpTargetConfig(url=f"{fault_server}/boom", max_retries=2, retry_backoff_s=0.01))
    try:
        with pytest.raises(TargetError, match="HTTP 500: index shard 3 is down") as info:
            await target.respond(DialogueState(id="c"), "hi")
    finally:
        await target.aclose()
    assert info.value.status == 500 and info.value.body == "index shard 3 is down"
    assert httpx.get(f"{fault_server}/count", timeout=5).json()["boom"] == 3  # 1 call + 2 retries


async def test_non_json_body(fault_server: str) -> None:
    for target in (
        build_target(HttpTargetConfig(url=f"{fault_server}/html")),
        build_target(OpenAIChatTargetConfig(base_url=f"{fault_server}/v1")),
    ):
        try:
            with pytest.raises(TargetError, match="not JSON") as info:
                await target.respond(DialogueState(id="c"), "hi")
        finally:
            await target.aclose()
        assert info.value.body == "<html>maintenance</html>"


async def test_retries_recover_from_503(fault_server: str) -> None:
    target = build_target(HttpTargetConfig(url=f"{fault_server}/flaky", max_retries=2, retry_backoff_s=0.01))
    try:
        reply = await target.respond(DialogueState(id="c"), "hi")
    finally:
        await target.aclose()
    assert reply.answer == "recovered"


async def test_a_wrong_answer_path_is_a_target_error(rag_server: str) -> None:
    target = build_target(HttpTargetConfig(url=f"{rag_server}/chat", answer_path="result.text"))
    try:
        with pytest.raises(TargetError, match="found nothing"):
            await target.respond(DialogueState(id="c"), "What is a volcano?")
    finally:
        await target.aclose()


def test_invalid_jmespath_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="answer_path"):
        build_target(HttpTargetConfig(url="http://127.0.0.1:1/x", answer_path="a[["))


def test_http_target_from_yaml_with_secret_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_TOKEN", "s3cret")
    config = validate_config(
        {
            "target": {
                "type": "http",
                "url": "http://127.0.0.1:8765/chat",
                "headers": {"Authorization": "Bearer ${RAG_TOKEN}"},
                "session_start": {"url": "http://127.0.0.1:8765/sessions"},
            }
        }
    )
    assert isinstance(config.target, HttpTargetConfig)
    assert config.target.headers["Authorization"] == "Bearer s3cret"
    assert config.target.session_start and config.target.session_start.id_path == "thread_id"


async def test_get_sends_the_body_as_query_parameters(fault_server: str) -> None:
    config = HttpTargetConfig(
        url=f"{fault_server}/echo",
        method="GET",
        body={"q": "{message}", "cid": "{conversation_id}"},
        answer_path="out.text",
        contexts_path=None,
    )
    target = build_target(config)
    try:
        reply = await target.respond(DialogueState(id="c9"), "what & why?")
    finally:
        await target.aclose()
    assert reply.answer == "echoed" and reply.raw["params"] == {"q": "what & why?", "cid": "c9"}


async def test_openai_chat_sends_key_extra_body_and_the_whole_conversation(fault_server: str) -> None:
    config = OpenAIChatTargetConfig(
        base_url=f"{fault_server}/v2", model="m", api_key="k-123", extra_body={"temperature": 0}, system_prompt="S"
    )
    target = build_target(config)
    try:
        reply = await target.respond(DialogueState(id="c", history=HISTORY), "next?")
    finally:
        await target.aclose()
    assert reply.raw["auth"] == "Bearer k-123"
    assert reply.raw["body"] == {
        "temperature": 0,
        "model": "m",
        "messages": [
            {"role": "system", "content": "S"},
            *[m.model_dump() for m in HISTORY],
            {"role": "user", "content": "next?"},
        ],
    }


async def test_timeouts_are_retried_then_a_target_error(fault_server: str) -> None:
    config = HttpTargetConfig(url=f"{fault_server}/slow", timeout_s=0.2, max_retries=1, retry_backoff_s=0.01)
    target = build_target(config)
    try:
        with pytest.raises(TargetError, match="ReadTimeout"):
            await target.respond(DialogueState(id="c"), "hi")
    finally:
        await target.aclose()
    assert httpx.get(f"{fault_server}/count", timeout=5).json()["slow"] == 2
