"""What a simulation in progress hands the evaluator, in order: each turn once the target answered it, and each
conversation once its line is on disk. The pipeline feeds it synchronously from the runner's hooks; the evaluator
reads it as an async stream, and also asks it which conversations are on disk already (a conversation lands on disk
before the evaluator has read that far: its early scores must still be written if the run stops then)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ..records import Conversation, Turn


@dataclass(frozen=True)
class AnsweredTurn:
    """A turn the target has just answered, in a conversation still being simulated (not on disk yet)."""

    conversation: Conversation
    turn: Turn


class Arrivals:
    def __init__(self) -> None:
        self._queue: asyncio.Queue[Conversation | AnsweredTurn | None] = asyncio.Queue()
        self.on_disk: dict[str, Conversation] = {}
        """This session's conversations on disk, by id, while the evaluator still holds early scores of them (it
        lets each go once those are written)."""

    def answered(self, conversation: Conversation, turn: Turn) -> None:
        self._queue.put_nowait(AnsweredTurn(conversation, turn))

    def written(self, conversation: Conversation) -> None:
        self.on_disk[conversation.id] = conversation
        self._queue.put_nowait(conversation)

    def close(self) -> None:
        """The simulation ended (however): the stream ends after what it already holds."""
        self._queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[Conversation | AnsweredTurn]:
        while (arrival := await self._queue.get()) is not None:
            yield arrival
