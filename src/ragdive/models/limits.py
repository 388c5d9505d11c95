"""Per-model concurrency limit and optional requests-per-minute pacing.

One `Limiter` is shared by every role bound to the same model and endpoint (see ModelContext), so two roles on
one local server don't each believe they own its whole capacity.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Limiter:
    def __init__(self, max_concurrency: int, requests_per_minute: float | None = None) -> None:
        self.max_concurrency = max_concurrency
        self.interval_s = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next_start = 0.0
        # asyncio primitives belong to one event loop; a Model may outlive a loop (tests, repeated asyncio.run),
        # so keep one semaphore per loop rather than one that breaks on the next loop.
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        return sem

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
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the model's concurrent slots for the duration of a call."""
        async with self._semaphore():
            await self._pace()
            yield
