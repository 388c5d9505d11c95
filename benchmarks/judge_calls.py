"""Judge calls per evaluated turn for the four single-turn metrics at k=10: ragdive vs Ragas, same data; and the
prompt each side sends per turn, in characters (messages plus the schema sent with them): one call over k contexts
saves requests, and must not cost more input. Characters, not tokens: no tokenizer of a hosted model is on this
machine (tiktoken downloads its tables); at ~4 characters per token for English the ratio is the same. Completion
sizes are the stub's, not a model's, so they are not compared.

ragdive: its own evaluator, judge `openai/...` through the real openai backend, against a local
OpenAI-compatible stub on loopback that counts requests (ragdive.testing.StubServer with SchemaReplies).
Ragas: its metric implementations (Faithfulness, ContextPrecisionWithReference, ContextRecall, AnswerCorrectness
with its default embedding similarity) against the same kind of stub.
Without ragas installed, Ragas's count is derived from its source and labelled so.

    python benchmarks/judge_calls.py [--turns 20] [--k 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import warnings
from typing import Any

from ragdive.config import ModelSpec
from ragdive.evaluation import Evaluator, Judge
from ragdive.models import get_model
from ragdive.records import Context, Conversation, Turn
from ragdive.testing import StubServer
from ragdive.testing.schema_replies import SchemaReplies

SINGLE_TURN = ["faithfulness", "context_precision", "context_recall", "correctness"]


def make_conversations(turns: int, k: int) -> list[Conversation]:
    out = []
    per_conv = 4
    for c in range((turns + per_conv - 1) // per_conv):
        n = min(per_conv, turns - c * per_conv)
        out.append(
            Conversation(
                id=f"bench-{c}",
                persona="precise",
                document_ids=[f"doc-{c}"],
                seed=c,
                turns=[
                    Turn(
                        index=i,
                        rag_input=f"And what about detail {i} of topic {c}?",
                        standalone_question=f"What is detail {i} of topic {c}?",
                        ground_truth=f"Detail {i} of topic {c} is value {i * c}, set in {1900 + i}.",
                        question_type="initial" if i == 0 else "follow-up",
                        answer=f"Detail {i} is value {i * c}; it was set in {1900 + i} by the committee.",
                        contexts=[Context(text=f"Passage {j} about topic {c}: fact {j}.") for j in range(k)],
                    )
                    for i in range(n)
                ],
            )
        )
    return out


def ragdive_calls(conversations: list[Conversation]) -> tuple[int, int, int]:
    """ragdive's evaluator through its real openai backend; requests counted by the stub and by the judge."""
    replies = SchemaReplies()
    with StubServer(reply=replies) as stub:
        spec = ModelSpec(model="openai/stub-judge", base_url=stub.base_url, api_key="none")
        judge = Judge(get_model(spec, role="judge"), concurrency=8)
        scores = asyncio.run(_score(Evaluator(judge, SINGLE_TURN), conversations))
        assert all(s.scored for s in scores), [s.unscored_reason for s in scores if not s.scored]
        return replies.counts["chat"], judge.calls, replies.counts["prompt_chars"]


async def _score(evaluator: Evaluator, conversations: list[Conversation]) -> list[Any]:
    try:
        return await evaluator.score_conversations(conversations)
    finally:
        await evaluator.judge.model.aclose()


def ragas_calls(conversations: list[Conversation]) -> tuple[int, int, int] | None:
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # instructor and ragas deprecations
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry to the vendor (and no network here)
    try:
        from openai import AsyncOpenAI
        from ragas.embeddings.base import embedding_factory
        from ragas.llms import llm_factory
        from ragas.metrics.collections import (
            AnswerCorrectness,
            ContextPrecisionWithReference,
            ContextRecall,
            Faithfulness,
        )
    except ImportError:
        return None

    async def run(stub: StubServer) -> None:
        client = AsyncOpenAI(base_url=stub.base_url, api_key="none")
        llm = llm_factory("stub-judge", client=client)
        embeddings = embedding_factory("openai", model="stub-embed", client=client, interface="modern")
        metrics = [
            Faithfulness(llm=llm),
            ContextPrecisionWithReference(llm=llm),
            ContextRecall(llm=llm),
            AnswerCorrectness(llm=llm, embeddings=embeddings),
        ]
        for conv in conversations:
            for t in conv.turns:
                ctx = [c.text for c in t.contexts]
                q, gt, a = t.standalone_question, t.ground_truth, t.answer or ""
                await metrics[0].ascore(user_input=q, response=a, retrieved_contexts=ctx)
                await metrics[1].ascore(user_input=q, reference=gt, retrieved_contexts=ctx)
                await metrics[2].ascore(user_input=q, retrieved_contexts=ctx, reference=gt)
                await metrics[3].ascore(user_input=q, response=a, reference=gt)
        await client.close()

    replies = SchemaReplies()
    with StubServer(reply=replies) as stub:
        asyncio.run(run(stub))
        return replies.counts["chat"], stub.embedding_requests, replies.counts["prompt_chars"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--k", type=int, default=10, help="retrieved contexts per turn")
    args = parser.parse_args()
    conversations = make_conversations(args.turns, args.k)
    n_turns = sum(len(c.turns) for c in conversations)

    wire, counted, our_chars = ragdive_calls(conversations)
    ours = wire / n_turns
    measured = ragas_calls(conversations)
    print(f"judge calls per evaluated turn, four single-turn metrics, k={args.k}, {n_turns} turns")
    print(
        f"  ragdive (measured, openai backend -> loopback stub):  {ours:.2f} LLM calls ({counted} counted by the judge)"
    )
    if measured is not None:
        chat, emb, their_chars = measured
        theirs = chat / n_turns
        print(
            f"  ragas   (measured, loopback OpenAI-compatible stub):  {theirs:.2f} LLM calls"
            f" + {emb / n_turns:.2f} embedding requests"
        )
    else:
        theirs = 2 + args.k + 1 + 3
        print(
            f"  ragas   (derived from ragas source, not measured):   {theirs:.2f} LLM calls"
            " (faithfulness 2, context precision k, context recall 1, answer correctness 3)"
        )
    print(f"  ratio ragdive / ragas: {ours / theirs:.2f} (goal: at most 0.50)")
    print("judge prompt per evaluated turn (characters sent: messages + schema)")
    print(f"  ragdive {our_chars / n_turns:10,.0f}")
    if measured is not None:
        print(f"  ragas   {their_chars / n_turns:10,.0f}   ratio ragdive / ragas: {our_chars / their_chars:.2f}")
    else:
        print("  ragas   not measured (ragas is not installed)")


if __name__ == "__main__":
    main()
