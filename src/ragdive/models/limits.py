"""Per-model concurrency limit (adaptive: AIMD) and optional requests-per-minute pacing.

One `Limiter` is shared by every role bound to the same model and endpoint (see ModelContext), so two roles on
one local server don't each believe they own its whole capacity.

Adaptive concurrency: the limit starts at ``max_concurrency``; a 429 (the server says "too many") halves it, and
every ``limit`` successes in a row raise it by one, never outside [1, max_concurrency] — additive increase,
multiplicative decrease, as TCP does. Only one halving per "generation": the calls that were already in flight
when the limit was halved answer 429 together, and counting each of them would drive the limit to 1 for one
burst. What happened is kept in `snapshot()` for the manifest.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass


@dataclass
class Slot:
    """One call's hold on the limiter; ``generation`` is the limit's generation when the call started."""

    generation: int


@dataclass(frozen=True)
class LimitState:
    max_concurrency: int
    limit: int
    """The current (adaptive) limit."""
    lowest: int
    """The lowest the limit went."""
    backoffs: int
    """Times a 429 halved the limit."""


class Limiter:
    def __init__(self, max_concurrency: int, requests_per_minute: float | None = None) -> None:
        self.max_concurrency = max_concurrency
        self.limit = max_concurrency
        self.lowest = max_concurrency
        self.backoffs = 0
        self.in_flight = 0
        self.interval_s = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next_start = 0.0
        self._generation = 0
        self._streak = 0
        # asyncio futures belong to one event loop; a Model may outlive a loop (tests, repeated asyncio.run), so
        # callers wait in a queue per loop.
        self._waiting: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, deque[asyncio.Future[None]]] = (
            weakref.WeakKeyDictionary()
        )

    def _queue(self) -> deque[asyncio.Future[None]]:
        loop = asyncio.get_running_loop()
        queue = self._waiting.get(loop)
        if queue is None:
            queue = self._waiting[loop] = deque()
        return queue

    async def _acquire(self) -> None:
        queue = self._queue()
        if self.in_flight < self.limit and not queue:
            self.in_flight += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(turn)
        try:
            await turn  # _wake hands over the slot: in_flight already counts it
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # handed over just as we were cancelled: give it on
            else:
                queue.remove(turn)
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        for queue in list(self._waiting.values()):
            while queue and self.in_flight < self.limit:
                turn = queue.popleft()
                if not turn.done():
                    self.in_flight += 1
                    turn.set_result(None)

    async def _pace(self) -> None:
        """Space request starts ``interval_s`` apart: each caller reserves the next free start time."""
        if not self.interval_s:
            return
        now = time.monotonic()
        start = max(now, self._next_start)
        self._next_start = start + self.interval_s
        if start > now:
            await asyncio.sleep(start - now)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        """Hold one of the model's concurrent slots for the duration of a call."""
        await self._acquire()
        try:
            await self._pace()
            yield Slot(self._generation)
        finally:
            self._release()

    # -- adapting ----------------------------------------------------------------------------------------------
    def succeeded(self) -> None:
        self._streak += 1
        if self._streak >= self.limit and self.limit < self.max_concurrency:
            self.limit += 1
            self._streak = 0
            self._wake()

    def throttled(self, slot: Slot) -> None:
        """A 429: halve the limit, once per generation (see the module's note)."""
        self._streak = 0
        if slot.generation != self._generation or self.limit == 1:
            return
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self.backoffs += 1
        self._generation += 1

    def snapshot(self) -> LimitState:
        return LimitState(self.max_concurrency, self.limit, self.lowest, self.backoffs)
