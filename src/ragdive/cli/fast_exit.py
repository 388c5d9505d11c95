"""How the `ragdive` process ends once its command has returned: at once, without the interpreter's teardown.

After a command returns, CPython joins the non-daemon threads, runs the atexit handlers (last registered first),
flushes the standard streams, and then tears itself down: it frees every module and every object still alive, one
by one. After a run that is the heap of records its summary and report read: ~0.12 s at 200 x 5 (an atexit stamp
to the process's exit, benchmarks/tail.py), more with the run's size, all of it spent after the last line was
printed, while the user waits for the prompt. Nothing in it is work: the kernel takes the memory back at exit.

So the console entry point (`main.entry`) registers one atexit handler before the command runs. Being registered
first, it runs last: after the threads are joined and after every handler registered while the command ran (the
run lock's release, the OTel and MLflow exporters' flush and shutdown, a llama.cpp worker's stop, Ray's shutdown,
weakref finalizers, logging's shutdown). It flushes stdout and stderr and ends the process with the command's exit
code (``os._exit``). What it skips is the teardown alone; the store writes and closes every run file before the
command returns (a run that did not do its job exits with its own non-zero code all the same).

It stands aside, and Python ends as usual, when the command did not return a code (it raised), when flushing a
stream fails (a closed pipe: Python reports that as it always does), and under coverage.py, whose handler to save
its data was registered before this one. Tests calling `main(argv)` in their own process never arm it.
"""

from __future__ import annotations

import atexit
import os
import sys


class _Ending:
    code: int | None = None


_ending = _Ending()


def arm() -> None:
    """Before the command runs (so that the handler runs after every one the command registers)."""
    atexit.register(_end_now)


def done(code: int) -> None:
    """The command returned ``code``: the process exits with it (`sys.exit(code)` follows at once)."""
    _ending.code = code


def _end_now() -> None:
    code = _ending.code
    if code is None or "coverage" in sys.modules:
        return
    try:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
