"""Stand-alone rewrites of logged user messages (`ragdive import chatlog --rewrite`): a real conversation has no
stand-alone question per turn, and per-turn metrics read one. The user model rewrites each message after the first
from the conversation before it; the first message stands alone by definition. A rewrite that fails leaves the
message as sent and is counted, never guessed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ..errors import ModelError
from ..models import Message, Model
from ..records import Conversation
from ._prompts import history_view, render


class StandaloneRewrite(BaseModel):
    reason: str = ""
    standalone_question: str = Field(min_length=1)


@dataclass
class RewriteOutcome:
    rewritten: int = 0
    unchanged: int = 0
    failed: int = 0
    failures: list[str] | None = None


async def rewrite_standalone(
    model: Model, conversations: list[Conversation], *, concurrency: int = 8
) -> RewriteOutcome:
    """Set ``standalone_question`` of every turn after the first, in place."""
    outcome = RewriteOutcome(failures=[])
    slots = asyncio.Semaphore(concurrency)

    async def one(conversation: Conversation, position: int) -> None:
        turn = conversation.turns[position]
        shown, _ = history_view(conversation.turns[:position], None)
        prompt = render("rewrite_standalone.md", history=shown, message=turn.rag_input)
        async with slots:
            try:
                completion = await model.generate([Message(role="user", content=prompt)], schema=StandaloneRewrite)
            except ModelError as exc:
                outcome.failed += 1
                assert outcome.failures is not None
                outcome.failures.append(f"{conversation.id} turn {turn.index + 1}: {str(exc).splitlines()[0][:200]}")
                return
        question = completion.parsed.standalone_question.strip()
        if question == turn.rag_input.strip():
            outcome.unchanged += 1
        else:
            outcome.rewritten += 1
        turn.standalone_question = question

    await asyncio.gather(*(one(c, i) for c in conversations for i in range(1, len(c.turns))))
    return outcome
