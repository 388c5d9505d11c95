"""SIGTERM stops a command the way Ctrl-C does, so a run stopped by `kill`, a container stop or a CI timeout is
marked ``interrupted`` with its finished work kept, instead of being left ``running`` by a process that is gone.

The handler hands the signal to whatever handles SIGINT at that moment: inside ``asyncio.run`` that is asyncio's
own handler, which cancels the main task so the run unwinds through its cancellation path (nothing is
half-written); elsewhere it is Python's default, which raises KeyboardInterrupt. Only the exit code differs:
130 for Ctrl-C, 143 (128 + SIGTERM) for SIGTERM.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM


class Stop:
    """What stopped the command, once a KeyboardInterrupt reached the top."""

    def __init__(self) -> None:
        self.terminated = False

    @property
    def exit_code(self) -> int:
        return EXIT_TERMINATED if self.terminated else EXIT_INTERRUPTED

    def on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.terminated = True
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            # SIGINT is ignored (a background job of a non-interactive shell), so asyncio installed no handler
            raise KeyboardInterrupt


@contextmanager
def sigterm_as_interrupt() -> Iterator[Stop]:
    """Within the block, SIGTERM acts as Ctrl-C; the previous handler is restored after (tests call the CLI in
    their own process). Signal handlers can only be set from the main thread; elsewhere nothing changes."""
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = signal.signal(signal.SIGTERM, stop.on_sigterm)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
