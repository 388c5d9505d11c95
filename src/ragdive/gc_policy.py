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

A process that is one command (the console entry point, which ends it without the interpreter's teardown:
cli.fast_exit) skips two collections that only cost: walking the command's modules, imported once and alive until
the process exits (``lasting``: ~45 ms at the start of `ragdive run`, whose first young collection walked ~50,000
of their objects), and, once the command has returned, the one that putting CPython's threshold of 700 back would
start at the next allocation, walking every young object the end of the run left just before the process exits
(~35 ms at 200 x 5).
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
_one_command = False
"""Set by ``one_command``: this process ends at once when its command returns."""


def one_command() -> None:
    """This process is one command and ends at once when it returns (the console entry point, cli.fast_exit):
    ``lasting`` freezes what it imports, and the end of the last ``fewer_collections`` turns the collector off
    instead of putting the threshold back (nothing is left to collect for: the process exits)."""
    global _one_command
    _one_command = True


def one_command_process() -> bool:
    return _one_command


@contextmanager
def lasting() -> Iterator[None]:
    """Objects made inside live as long as the process (a command's modules): in a one-command process no
    collection runs while they are made and they are frozen after (gc.freeze: set apart, never walked again; a
    cycle among them that dies is never freed, as a module's objects never are). Elsewhere (tests and programs
    that call ``cli.main`` or the API) nothing changes."""
    if not _one_command:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


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
                if _one_command:
                    gc.disable()  # the command is over and the process exits: no collection of its last objects
                else:
                    gc.set_threshold(*_saved)
