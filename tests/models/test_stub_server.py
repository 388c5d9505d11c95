from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, Field

from ragdive.testing import Fault, StubServer, example_for_schema


class Inner(BaseModel):
    tags: list[str] = Field(min_length=2)
    kind: str = Field(pattern="^a|b$", default="a")


class Outer(BaseModel):
    name: str
    score: float = Field(ge=1, le=5)
    flag: bool
    inner: Inner
    maybe: int | None


def test_example_for_schema_validates() -> None:
    Outer.model_validate(example_for_schema(Outer.model_json_schema()))


def test_faults_in_order_then_normal_answers_and_requests_counted() -> None:
    with StubServer(reply=lambda body: "custom", keep_requests=True) as server:
        server.plan(Fault.rate_limited(retry_after=2), Fault.error(503), Fault.garbage("<html>"))
        url = f"{server.base_url}/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        first = httpx.post(url, json=body)
        assert first.status_code == 429 and first.headers["retry-after"] == "2"
        assert httpx.post(url, json=body).status_code == 503
        garbage = httpx.post(url, json=body)
        assert garbage.status_code == 200 and garbage.text == "<html>"
        ok = httpx.post(url, json=body).json()
        assert ok["choices"][0]["message"]["content"] == "custom" and ok["usage"]["prompt_tokens"] == 1
        assert server.request_count == 4
        assert [r.fault.kind for r in server.requests] == ["status", "status", "garbage", "ok"]
        assert httpx.get(f"{server.base_url}/models").json()["data"][0]["id"] == "stub-model"
    assert server.request_count == 4  # stopped cleanly, log kept


def test_by_default_requests_are_counted_not_kept() -> None:
    # a benchmark's hundreds of thousands of request bodies would otherwise fill the stub's memory
    with StubServer(reply=lambda body: "custom") as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        for _ in range(3):
            assert httpx.post(f"{server.base_url}/chat/completions", json=body).status_code == 200
        assert server.request_count == 3 and server._requests == []
        with pytest.raises(RuntimeError, match="keep_requests=True"):
            _ = server.requests
        stats = httpx.get(f"{server.base_url.removesuffix('/v1')}/_stub/stats").json()
        assert stats["count"] == 3
        assert httpx.get(f"{server.base_url.removesuffix('/v1')}/_stub/requests").status_code == 409
        server.reset()
        assert server.request_count == 0


def test_hang_ends_when_the_client_gives_up() -> None:
    with StubServer() as server:
        server.plan(Fault.hang(30))
        try:
            httpx.post(f"{server.base_url}/chat/completions", json={"messages": []}, timeout=0.3)
        except httpx.TimeoutException:
            pass
        else:
            raise AssertionError("the hang answered")
        assert server.request_count == 1


def test_stub_in_its_own_process_is_programmed_over_its_control_api() -> None:
    from ragdive.testing import StubProcess

    with StubProcess(api_key="k", keep_requests=True) as server:
        server.plan(Fault.error(502), Fault.ok("planned"))
        url = f"{server.base_url}/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        headers = {"Authorization": "Bearer k"}
        assert httpx.post(url, json=body, headers=headers).status_code == 502
        assert httpx.post(url, json=body, headers=headers).json()["choices"][0]["message"]["content"] == "planned"
        assert httpx.post(url, json=body).status_code == 401  # wrong key
        assert server.request_count == 3
        assert [r.fault.status for r in server.requests] == [502, 200, 200]
        server.reset()
        assert server.request_count == 0


def _structured(schema_name: str = "X") -> dict[str, object]:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": schema_name, "schema": schema}},
    }


def test_reset_truncated_and_wrong_shape_faults() -> None:
    import json

    import pytest

    with StubServer(keep_requests=True) as server:
        server.plan(Fault.reset(), Fault.truncated(), Fault.wrong_shape())
        url = f"{server.base_url}/chat/completions"
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(url, json=_structured())  # the peer went away mid-reply
        truncated = httpx.post(url, json=_structured()).json()["choices"][0]["message"]["content"]
        with pytest.raises(json.JSONDecodeError):
            json.loads(truncated)
        assert '{"a": "stub"}'.startswith(truncated)
        assert json.loads(httpx.post(url, json=_structured()).json()["choices"][0]["message"]["content"]) == {
            "unexpected": True
        }
        assert [r.fault.family for r in server.requests] == ["transport", "content", "content"]


def test_random_faults_per_family_are_seeded_and_at_their_rate() -> None:
    import random

    from ragdive.testing import FaultRates

    def families(rates: FaultRates, n: int = 1000) -> list[str]:
        rng = random.Random(rates.seed)
        return [rates.draw(rng).family for _ in range(n)]

    transport = families(FaultRates(transport=0.3, seed=5))
    assert transport == families(FaultRates(transport=0.3, seed=5))  # the same requests fail
    assert set(transport) == {"ok", "transport"} and 240 <= transport.count("transport") <= 360
    content = families(FaultRates(content=0.5, seed=1))
    assert set(content) == {"ok", "content"} and 420 <= content.count("content") <= 580
    with StubServer(keep_requests=True) as server:  # and the server draws them for every request past its plan
        server.plan(Fault.ok()).chaos(FaultRates(content=1.0, seed=2))
        with httpx.Client() as client:
            for _ in range(6):
                client.post(f"{server.base_url}/chat/completions", json=_structured())
        assert [r.fault.family for r in server.requests] == ["ok"] + ["content"] * 5


def test_the_offline_reply_answers_each_role_over_http() -> None:
    import json

    from ragdive.testing.offline import stub_reply

    with StubServer(reply=stub_reply) as server:
        url = f"{server.base_url}/chat/completions"
        verdict = json.loads(
            httpx.post(url, json=_structured("VerdictOutput")).json()["choices"][0]["message"]["content"]
        )
        assert verdict["valid"] is True
        answer = httpx.post(url, json={"model": "m", "messages": [{"role": "user", "content": "Why?"}]}).json()
        assert answer["choices"][0]["message"]["content"] == "As far as I know: Why?"
        assert answer["contexts"] == [{"text": "Why?", "source": "echo"}]


def test_latency_overlaps_requests_in_flight_and_the_peak_is_counted() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with StubServer(latency_s=0.5) as server:
        url = f"{server.base_url}/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda _: httpx.post(url, json=body, timeout=10), range(4)))
        assert all(r.status_code == 200 for r in replies)
        assert server.peak_in_flight == 4 and server.in_flight == 0
        server.reset()
        assert server.peak_in_flight == 0


def test_ragdive_roles_reply_quotes_the_document_accepts_and_answers_with_contexts() -> None:

    from ragdive.simulation.generator import DraftOutput
    from ragdive.testing.role_replies import TARGET_CONTEXT, ragdive_roles

    def structured(schema: type[BaseModel], prompt: str) -> dict[str, object]:
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema.model_json_schema()}}
        return {"messages": [{"role": "user", "content": prompt}], "response_format": fmt}

    doc = (
        '<document id="d" title="T">\nThe bridge was finished in 1701 by masons. '
        "It has seven arches of stone.\n</document>"
    )
    reply = ragdive_roles(structured(DraftOutput, f"{doc}\nWrite turn 2."))
    assert isinstance(reply, str)
    draft = DraftOutput.model_validate_json(reply)
    assert draft.evidence == ["It has seven arches of stone."] and draft.question_type == "follow-up"
    with StubServer(reply=ragdive_roles) as server:
        plain = {"model": "rag", "messages": [{"role": "user", "content": "hi"}]}
        answer = httpx.post(f"{server.base_url}/chat/completions", json=plain).json()
        assert answer["contexts"][0]["text"] == TARGET_CONTEXT
        assert answer["choices"][0]["message"]["content"].startswith("The stub answers")


def test_other_simulators_reply_keeps_a_conversation_going_and_otherwise_answers_as_ragdive_roles() -> None:
    import json

    from ragdive.testing.role_replies import other_simulators, ragdive_roles

    class Completion(BaseModel):  # the shape of DeepEval's completion check
        is_complete: bool
        reason: str

    def structured(schema: type[BaseModel]) -> dict[str, object]:
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema.model_json_schema()}}
        return {"messages": [{"role": "user", "content": "Is the conversation done?"}], "response_format": fmt}

    verdict = other_simulators(structured(Completion))
    assert isinstance(verdict, str) and Completion.model_validate_json(verdict).is_complete is False
    assert json.loads(ragdive_roles(structured(Completion)))["is_complete"] is True  # what it would say otherwise
    plain = {"model": "rag", "messages": [{"role": "user", "content": "hi"}]}
    first, second, ours = other_simulators(plain), other_simulators(plain), ragdive_roles(plain)
    assert isinstance(first, dict) and isinstance(second, dict) and isinstance(ours, dict)
    assert first["text"].startswith(ours["text"]) and first["text"] != second["text"]  # the target: unique_roles


def test_unique_roles_numbers_every_target_answer_and_leaves_the_other_roles_alone() -> None:
    from ragdive.testing.role_replies import ragdive_roles, unique_roles

    plain = {"model": "rag", "messages": [{"role": "user", "content": "hi"}]}
    answers = [unique_roles(plain) for _ in range(3)]
    texts = {a["text"] for a in answers if isinstance(a, dict)}
    assert len(texts) == 3 and all(isinstance(a, dict) and a["extra"]["contexts"] for a in answers)
    verdict = {"properties": {"valid": {}, "failed_checks": {}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": verdict}}
    judged = {"messages": [{"role": "user", "content": "check"}], "response_format": fmt}
    assert unique_roles(judged) == ragdive_roles(judged)


def test_prefix_cached_roles_reports_the_prefix_a_model_was_already_sent_as_cached_tokens() -> None:
    from ragdive.testing.role_replies import prefix_cached_roles

    system = {"role": "system", "content": "You play a user. Stay in character."}
    first = {"model": "stub-user", "messages": [system, {"role": "user", "content": "Document one. Turn 1."}]}
    later = {"model": "stub-user", "messages": [system, {"role": "user", "content": "Document one. Turn 2 now."}]}
    other = {"model": "stub-judge", "messages": [system, {"role": "user", "content": "Document one. Turn 2 now."}]}
    usages = [prefix_cached_roles(body)["extra"]["usage"] for body in (first, later, other)]  # type: ignore[index]
    assert usages[0]["prompt_tokens_details"]["cached_tokens"] == 0  # nothing sent before
    # "system You play a user. Stay in character. user Document one. Turn" is shared: 12 words of 14
    assert (usages[1]["prompt_tokens"], usages[1]["prompt_tokens_details"]["cached_tokens"]) == (14, 12)
    assert usages[2]["prompt_tokens_details"]["cached_tokens"] == 0  # another model has its own cache


def test_corpus_contexts_reply_retrieves_real_length_passages_sharing_the_question_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.testing import role_replies

    filler = " ".join(f"Sentence {i} talks about weather and clouds." for i in range(60))  # ~2,700 characters
    (tmp_path / "a.txt").write_text(filler + " The lighthouse keeper lived on the granite island.")
    (tmp_path / "b.md").write_text(filler)
    monkeypatch.setenv(role_replies.CONTEXTS_FOLDER, str(tmp_path))
    role_replies._passages.cache_clear()
    try:
        plain = {"model": "rag", "messages": [{"role": "user", "content": "Where did the lighthouse keeper live?"}]}
        reply = role_replies.corpus_contexts(plain)
        assert isinstance(reply, dict) and reply["text"].startswith("The stub answers")
        contexts = reply["extra"]["contexts"]
        assert len(contexts) == role_replies.PASSAGES
        assert "lighthouse keeper" in contexts[0]["text"] and contexts[0]["source"] == "a.txt"  # the best match first
        assert all(role_replies.PASSAGE_CHARS <= len(c["text"]) < 2 * role_replies.PASSAGE_CHARS for c in contexts[1:])
        verdict = {"properties": {"valid": {}, "failed_checks": {}}}
        judged = {
            "messages": [{"role": "user", "content": "check"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": verdict}},
        }
        assert role_replies.corpus_contexts(judged) == role_replies.ragdive_roles(judged)  # other roles as before
    finally:
        role_replies._passages.cache_clear()
