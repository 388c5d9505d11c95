"""Scoring jobs: cheap closures that judge one item when run (a prompt is rendered only then), each score stamped
with the conversation line it judged. A turn judged before its conversation is on disk holds its score in a
future until that line is written (see Evaluator.score_planned)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..records import Conversation, Score
from .arrivals import AnsweredTurn
from .judging import JudgeProtocol
from .metrics import ConversationMetric, TurnMetric

Job = Callable[[], Awaitable[Score]]
"""One item's scoring: judge it when called."""


def stamped(conv: Conversation, make: Job) -> Job:
    """The score, stamped with the conversation line it judged (a redone conversation's old scores are stale)."""

    async def job() -> Score:
        return stamp(conv, await make())

    return job


def stamp(conv: Conversation, score: Score) -> Score:
    return score.model_copy(update={"conversation_finished": conv.finished})


def early_job(
    metric: TurnMetric, judge: JudgeProtocol, answered: AnsweredTurn, future: asyncio.Future[Score]
) -> Callable[[], Awaitable[None]]:
    """Judge an answered turn and hold the score in ``future`` until its conversation is written."""

    async def job() -> None:
        try:
            score = await metric.score(judge, answered.conversation, answered.turn)
        except BaseException:
            future.cancel()  # the run stops on this exception; nobody waits for the score
            raise
        if not future.done():
            future.set_result(score)

    return job


def held_job(conv: Conversation, future: asyncio.Future[Score]) -> Job:
    async def score() -> Score:
        return await future

    return stamped(conv, score)


def turn_job(metric: TurnMetric, judge: JudgeProtocol, conv: Conversation, index: int) -> Job:
    turn = next(t for t in conv.turns if t.index == index)
    return stamped(conv, lambda: metric.score(judge, conv, turn))


def conversation_job(metric: ConversationMetric, judge: JudgeProtocol, conv: Conversation) -> Job:
    return stamped(conv, lambda: metric.score(judge, conv))
