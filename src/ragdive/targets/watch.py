"""The rule both the simulation and static mode apply to the system under test: a target that has failed
TARGET_FAILURES_BEFORE_STOP turns without answering a single one is down, not flaky. Stopping then gives one clear
error instead of asking every remaining question in vain (and, when simulating, spending the user and validator
models on every remaining conversation)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ..errors import TargetError
from ..models import Message
from ..records import Conversation, Turn
from .base import DialogueState, Target

TARGET_FAILURES_BEFORE_STOP = 3


class TargetWatch:
    """Counts a session's answered and failed turns; ``saw`` raises TargetError once the target looks down.

    ``planned`` is how many units (conversations, questions) this session will ask: with fewer than the limit,
    all of them failing is enough."""

    def __init__(self, planned: int, *, saved: str = "what finished so far is saved") -> None:
        self.limit = min(TARGET_FAILURES_BEFORE_STOP, planned) or 1
        self.saved = saved
        self.answers = 0
        self.failures: list[str] = []

    def saw(self, conversation: Conversation) -> None:
        for turn in conversation.turns:
            if turn.error is not None:
                self.failures.append(turn.error)
            elif turn.answer is not None:
                self.answers += 1
        if self.answers == 0 and len(self.failures) >= self.limit:
            raise TargetError(
                f"the target failed {len(self.failures)} times and never answered; stopping ({self.saved}). "
                f"First failure: {self.failures[0]}"
            )


async def answer_turn(target: Target, state: DialogueState, turn: Turn) -> bool:
    """Send ``turn.rag_input`` to the target with the session's history; record its answer, contexts and latency on
    the turn and extend the history. A TargetError is recorded on the turn (``error``) and returns False: the
    conversation ends there (simulation and replay alike)."""
    try:
        reply = await target.respond(state, turn.rag_input)
    except TargetError as exc:
        turn.error = str(exc) or type(exc).__name__
        return False
    turn.answer, turn.contexts, turn.latency_s = reply.answer, reply.contexts, reply.latency_s
    turn.citations = reply.citations
    state.history += [Message(role="user", content=turn.rag_input), Message(role="assistant", content=reply.answer)]
    return True


async def save_as_finished(
    tasks: Sequence[asyncio.Future[Conversation]],
    save: Callable[[Conversation], None],
    watch: TargetWatch,
    failed: Callable[[Conversation], bool],
) -> tuple[int, int]:
    """Save each conversation as its task finishes (so an interruption keeps every finished one) and let ``watch``
    stop the session once the target looks down; the tasks left are cancelled however it ends. Returns (saved,
    failed)."""
    saved = failures = 0
    try:
        for finished in asyncio.as_completed(tasks):
            conversation = await finished
            save(conversation)
            saved += 1
            failures += failed(conversation)
            watch.saw(conversation)
    finally:
        for task in tasks:
            task.cancel()
    return saved, failures
