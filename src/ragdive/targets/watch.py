"""The rule both the simulation and static mode apply to the system under test: a target that has failed
TARGET_FAILURES_BEFORE_STOP turns without answering a single one is down, not flaky. Stopping then gives one clear
error instead of asking every remaining question in vain (and, when simulating, spending the user and validator
models on every remaining conversation)."""

from __future__ import annotations

from ..errors import TargetError
from ..records import Conversation

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
