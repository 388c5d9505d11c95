"""Asking a target and scoring its answers at once, for static mode and replay (`run` has its own, finer-grained
version in experiment.py: it also judges each turn as soon as it is answered).

Each conversation is scored as soon as its line is on disk, while later ones are still being asked, so such a run
takes about as long as the longer of the two stages instead of their sum. Both stay resumable as before: the
store's conversations are planned before the first question is sent, and the ones this session writes arrive
through the stream (disjoint: ``redone`` are the ids the asking may write). A failure on either side stops the
other; whatever was written stays on disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..evaluation import Arrivals, EvaluationResult, Evaluator
from ..models.selfcheck import check_local_models
from ..records import Conversation, Score
from ..store import RunStore

T = TypeVar("T")


@dataclass
class AskingHooks:
    """What a display is told of a run that asks a target fixed messages (static mode's questions, a replay's
    recorded conversations): the run exists with ``total`` conversations to ask; each answered one; scoring."""

    on_created: Callable[[RunStore, int], None] | None = None
    on_answer: Callable[[Conversation], None] | None = None
    on_scoring: Callable[[int, int], None] | None = None
    on_score: Callable[[Score], None] | None = None


async def ask_while_scoring(
    evaluator: Evaluator | None,
    store: RunStore,
    ask: Callable[[Callable[[Conversation], None]], Awaitable[T]],
    *,
    turns: Mapping[str, int],
    on_conversation: Callable[[Conversation], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_score: Callable[[Score], None] | None = None,
) -> tuple[T, EvaluationResult | None]:
    """``ask(saved)`` sends the questions and calls ``saved(conversation)`` once each line is on disk; ``turns``:
    id -> turns (at most) of every conversation the run holds or will hold, the ones not finished on disk are
    those the asking writes. Without an ``evaluator`` it only asks. ``on_conversation`` is told each saved one."""

    def told(written: Callable[[Conversation], None] | None) -> Callable[[Conversation], None]:
        def saved(conversation: Conversation) -> None:
            if on_conversation is not None:
                on_conversation(conversation)
            if written is not None:
                written(conversation)

        return saved

    if evaluator is None:
        return await ask(told(None)), None
    await check_local_models(evaluator.judge.local_models)  # a broken judge fails before any question is sent
    redone = set(turns) - store.finished_conversation_ids()
    expected = sum(evaluator.items_per_conversation(turns[cid]) for cid in redone)
    plan = evaluator.plan_run(store, redone=redone)  # no await between this and the first write below
    arrivals = Arrivals()

    async def asking() -> T:
        try:
            return await ask(told(arrivals.written))
        finally:
            arrivals.close()  # however it ended: the judge scores what arrived, then stops

    asked = asyncio.ensure_future(asking())
    scoring = asyncio.ensure_future(
        evaluator.score_planned(store, plan, incoming=arrivals, expected=expected, on_start=on_start, on_score=on_score)
    )
    both: set[asyncio.Future[Any]] = {asked, scoring}
    try:
        await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
        if scoring.done() and scoring.exception() is not None:
            scoring.result()  # the judge failed (a spent budget, a crash): the asking stops with it (finally)
        answer = await asked  # its error, if any, stops the scoring (finally)
        return answer, await scoring
    finally:
        for task in both:
            task.cancel()
        await asyncio.gather(*both, return_exceptions=True)
