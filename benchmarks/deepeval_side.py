"""DeepEval's side of benchmarks/throughput.py: its conversation simulator and its multi-turn metrics, every model
call on the same fixed-latency stub ragdive's run used, at the same size.

DeepEval plays the user (ConversationSimulator, its expected-outcome controller deciding after each turn whether
to go on) against a RAG callback that asks the stub as ragdive's openai-chat target does (one request per turn,
contexts beside the answer), then scores every conversation with the multi-turn counterparts of ragdive's
metrics: TurnFaithfulness, TurnContextualPrecision, TurnContextualRecall, TurnRelevancy (per turn) and
KnowledgeRetention (per conversation). Its judge is a DeepEvalBaseLLM on the official `openai` client that sends
each schema as a JSON-schema response format, so the stub answers every step with a valid instance (as for
ragdive's judge); the controller is told "not complete", so every conversation takes the same turns as ragdive's.

Only importable with deepeval installed (the `deepeval` extra); throughput.py says so and skips it otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")  # no network calls of its own: the stub is the world

import httpx  # noqa: E402
import openai  # noqa: E402
from deepeval.dataset import ConversationalGolden  # noqa: E402
from deepeval.metrics import (  # noqa: E402
    KnowledgeRetentionMetric,
    TurnContextualPrecisionMetric,
    TurnContextualRecallMetric,
    TurnFaithfulnessMetric,
    TurnRelevancyMetric,
)
from deepeval.models.base_model import DeepEvalBaseLLM  # noqa: E402
from deepeval.simulator import ConversationSimulator  # noqa: E402
from deepeval.test_case import ConversationalTestCase, Turn  # noqa: E402
from pydantic import BaseModel  # noqa: E402

REPLY = "ragdive.testing.role_replies:other_simulators"
"""The stub's reply: ragdive's roles, and "not complete" to DeepEval's controller."""


class StubJudge(DeepEvalBaseLLM):
    """A DeepEval model on the stub: structured output by JSON schema, as a hosted model with response_format."""

    def __init__(self, base_url: str, max_connections: int, model: str = "judge") -> None:
        self.sent_as = model  # not self.model: DeepEvalBaseLLM sets that to load_model()'s result
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        http = openai.DefaultAsyncHttpxClient(limits=limits)
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=http)
        self.blocking = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
        super().__init__("stub-judge")

    def load_model(self) -> Any:
        return self.client

    def get_model_name(self) -> str:
        return "stub-judge"

    def generate(self, prompt: str, schema: type[BaseModel] | None = None) -> Any:
        # DeepEval's async metrics call this too (TurnFaithfulness's reason step): it blocks their event loop,
        # as it would with any model; measured as it is
        reply = self.blocking.chat.completions.create(**_request(self.sent_as, prompt, schema))
        return _parsed(reply, schema)

    async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None) -> Any:
        reply = await self.client.chat.completions.create(**_request(self.sent_as, prompt, schema))
        return _parsed(reply, schema)


def _request(model: str, prompt: str, schema: type[BaseModel] | None) -> dict[str, Any]:
    request: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": prompt}]}
    if schema is not None:
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
        }
    return request


def _parsed(reply: Any, schema: type[BaseModel] | None) -> Any:
    text = reply.choices[0].message.content or ""
    return schema.model_validate_json(text) if schema is not None else text


@dataclass
class DeepEvalRun:
    wall: float
    simulated: float
    """Seconds until the simulator returned (it scores nothing)."""
    turns: int
    judge_requests: int
    judge_chars: int
    """Characters of the judge's prompts (messages and schema), as benchmarks/judge_calls.py counts them."""


async def deepeval_run(
    stub: Any, conversations: int, turns: int, concurrency: int | None, scenarios: list[str] | None = None
) -> DeepEvalRun:
    """DeepEval on ``stub`` (a started ragdive.testing.StubProcess answering with REPLY): simulate ``conversations``
    of ``turns`` user turns, then score them; ``concurrency`` (None: DeepEval's defaults) for the simulator's
    ``max_concurrent`` and the metrics' gather; ``scenarios``: each conversation's scenario (default: one line
    naming a topic). The judge's requests are read back from the stub."""
    at_once = concurrency or 5  # ConversationSimulator's default max_concurrent
    scoring_at_once = concurrency or 20  # deepeval.evaluate's default AsyncConfig(max_concurrent=20)
    connections = max(100, at_once, scoring_at_once)
    simulating = StubJudge(stub.base_url, connections, "simulator")  # on the simulator's own loop (its thread)
    target = openai.AsyncOpenAI(base_url=stub.base_url, api_key="x", max_retries=0)

    async def callback(input: str, turns: list[Turn]) -> Turn:  # noqa: A002 - DeepEval passes it by this name
        history = [{"role": t.role, "content": t.content} for t in turns]
        reply = await target.chat.completions.create(
            model="target", messages=[*history, {"role": "user", "content": input}]
        )
        contexts = (reply.model_extra or {}).get("contexts") or []
        return Turn(
            role="assistant",
            content=reply.choices[0].message.content or "",
            retrieval_context=[c["text"] for c in contexts],
        )

    goldens = [
        ConversationalGolden(
            scenario=scenarios[i]
            if scenarios
            else f"A user asks about topic {i} of the knowledge base, then follows up.",
            expected_outcome=f"The user learns what the knowledge base says about topic {i}.",
            user_description="A precise user who asks short questions.",
        )
        for i in range(conversations)
    ]
    simulator = ConversationSimulator(model_callback=callback, simulator_model=simulating, max_concurrent=at_once)
    stub.reset()
    began = time.perf_counter()

    def simulate() -> list[ConversationalTestCase]:
        """In a thread: DeepEval runs its async simulation on an event loop it makes for the thread (and leaves
        open), where its clients' connections live; they are closed there before the loop is."""
        cases = simulator.simulate(conversational_goldens=goldens, max_user_simulations=turns)
        loop = asyncio.get_event_loop_policy().get_event_loop()
        loop.run_until_complete(asyncio.gather(simulating.client.close(), target.close()))
        loop.close()
        return cases

    cases = await asyncio.to_thread(simulate)
    simulated = time.perf_counter() - began
    judge = StubJudge(stub.base_url, connections)  # the test cases carry their golden's expected outcome
    metrics = [
        TurnFaithfulnessMetric,
        TurnContextualPrecisionMetric,
        TurnContextualRecallMetric,
        TurnRelevancyMetric,
        KnowledgeRetentionMetric,
    ]
    gate = asyncio.Semaphore(scoring_at_once)

    async def score(case: ConversationalTestCase, metric: type[Any]) -> None:
        async with gate:
            await metric(model=judge, async_mode=True).a_measure(case, _show_indicator=False)

    await asyncio.gather(*(score(case, metric) for case in cases for metric in metrics))
    wall = time.perf_counter() - began
    judged = [r.body for r in stub.requests if r.body.get("model") == "judge"]  # the simulator's are "simulator"
    assistant_turns = sum(1 for case in cases for t in case.turns if t.role == "assistant")
    await judge.client.close()
    return DeepEvalRun(wall, simulated, assistant_turns, len(judged), sum(map(prompt_chars, judged)))


def prompt_chars(body: dict[str, Any]) -> int:
    """Characters one chat request sends a judge: its messages' text and the JSON schema sent with them."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    text = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
    return text + (len(json.dumps(schema)) if schema else 0)
