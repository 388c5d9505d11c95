"""The contract every system under test implements.

Both styles of history work: a target that keeps its own session uses ``conversation.id`` (and may open a session
in ``start``); a stateless target uses ``conversation.history``, the full exchange so far.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from ..models.base import Message
from ..records import TargetReply


@dataclass
class DialogueState:
    """What a target may know about the conversation it is answering in."""

    id: str
    """Conversation id: the session key for targets that keep their own history."""
    history: list[Message] = field(default_factory=list)
    """Earlier user and assistant messages, oldest first (the current message is not included)."""
    session: dict[str, object] = field(default_factory=dict)
    """Adapter-private state (e.g. a thread id returned by a session-start call)."""


class Target(ABC):
    """A RAG system under test."""

    async def start(self, conversation: DialogueState) -> None:  # noqa: B027 - optional hook
        """Open a session before the first turn (targets that need one)."""

    @abstractmethod
    async def respond(self, conversation: DialogueState, user_message: str) -> TargetReply:
        """Answer ``user_message``. Raise TargetError when the system fails; the turn records it."""

    async def check_reachable(self) -> None:  # noqa: B027 - optional hook
        """Fail fast (TargetError) when the system cannot be reached at all; called once before a run's first
        draft. Targets over a network check the connection without sending a request; in-process ones have
        nothing to check."""

    def describe(self) -> str:
        """One line for the manifest and reports."""
        return type(self).__name__

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
