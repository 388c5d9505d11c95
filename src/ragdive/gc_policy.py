"""Python's garbage collector while a run works.

CPython collects its youngest generation every 700 net allocations. A run keeps ~128 requests in flight, each
holding its prompt, reply and parsed records for a tenth of a second or more: at every young collection most of
them are still alive, so they are promoted, die in the oldest generation, and make it run a full collection of the
whole heap every couple of seconds. At 2,000 x 5 that was 51 full collections, 5.3 s, pauses of 50-140 ms growing
with the heap (every call in flight waits through each), and up to 0.5 s while the end of the run read its records.
Collecting the youngest generation every 50,000 allocations instead lets those objects die young: no full
collection in the whole run, 1.6 s of collecting in all, the same peak memory (benchmarks/scale.py: 2,000 x 5 in
80.8 s against 84.7 s).

A run's session (store.session) applies it while the run works, and a command for its whole process; nested and
concurrent users (a sweep's runs) share one setting, restored when the last one ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000
"""Allocations between two collections of the youngest generation while a run works (CPython's default: 700)."""

_lock = threading.Lock()
_users = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The youngest generation collected every YOUNG_THRESHOLD allocations (never less often than it was) until
    the last user ends; then the collector's thresholds as they were."""
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), *_saved[1:])
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved is not None:
                gc.set_threshold(*_saved)
