"""Per-model concurrency limit (adaptive: AIMD) and optional requests-per-minute pacing.

One `Limiter` is shared by every role bound to the same model and endpoint (see ModelContext), so two roles on
one local server don't each believe they own its whole capacity.

Adaptive concurrency: the limit starts at ``max_concurrency``; a 429 (the server says "too many") halves it, and
every ``limit`` successes in a row raise it by one, never outside [1, max_concurrency] — additive increase,
multiplicative decrease, as TCP does. Only one halving per "generation": the calls that were already in flight
when the limit was halved answer 429 together, and counting each of them would drive the limit to 1 for one
burst. What happened is kept in `snapshot()` for the manifest.

Priority: a waiting call of the simulation (user, validator, a reference RAG's generator) is let in before a
waiting judge call. A simulation call lies on a conversation's chain of dependent calls, while a judge call made
as the run goes waits for nothing but a free slot: when one model serves every role, judging early must fill
the simulation's gaps, not lengthen its chain.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from dataclasses import dataclass

_Queue = deque[asyncio.Future[None]]


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
        # callers wait in queues per loop: (urgent, background), see the module's note on priority.
        self._waiting: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[_Queue, _Queue]] = (
            weakref.WeakKeyDictionary()
        )
        self._queued = 0
        """Callers waiting in any queue: a release with none waiting wakes nobody, without walking the queues."""
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], tuple[_Queue, _Queue]] | None = None
        """The last loop's queues (a weak reference: the loop may go), looked up on every call."""

    def _queues(self) -> tuple[_Queue, _Queue]:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        queues = self._waiting.get(loop)
        if queues is None:
            queues = self._waiting[loop] = (deque(), deque())
        self._last = (weakref.ref(loop), queues)
        return queues

    async def _acquire(self, background: bool) -> None:
        urgent, later = self._queues()
        queue = later if background else urgent
        if self.in_flight < self.limit and not urgent and not (background and later):
            self.in_flight += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(turn)
        self._queued += 1
        try:
            await turn  # _wake hands over the slot: in_flight already counts it
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # handed over just as we were cancelled: give it on
            elif turn in queue:
                queue.remove(turn)
                self._queued -= 1
            # else: cancelled while still queued, then a release's _wake popped it (skipping it, and counting it
            # off) before this task ran again: nothing left to undo
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        if not self._queued or self.in_flight >= self.limit:
            return
        for which in (0, 1):  # every loop's urgent queue first, then the background ones
            for queues in list(self._waiting.values()):
                queue = queues[which]
                while queue and self.in_flight < self.limit:
                    turn = queue.popleft()
                    self._queued -= 1
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

    def slot(self, *, background: bool = False) -> _Hold:
        """Hold one of the model's concurrent slots for the duration of a call (``async with``). A ``background``
        call (the judge's) waits while any other call is waiting."""
        return _Hold(self, background)

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


class _Hold:
    """``async with limiter.slot()``: a plain context manager object, not a generator-based one (every model call
    takes a slot: contextlib's wrapper cost a generator, its frames and a StopIteration per call)."""

    __slots__ = ("_limiter", "_background")

    def __init__(self, limiter: Limiter, background: bool) -> None:
        self._limiter = limiter
        self._background = background

    async def __aenter__(self) -> Slot:
        limiter = self._limiter
        await limiter._acquire(self._background)
        try:
            if limiter.interval_s:
                await limiter._pace()
        except BaseException:
            limiter._release()  # cancelled while pacing: the slot goes back
            raise
        return Slot(limiter._generation)

    async def __aexit__(self, *exc: object) -> None:
        self._limiter._release()
