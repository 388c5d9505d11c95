"""The parent side of the llama.cpp worker: start it, send one request at a time, kill it on timeout, and turn
its death into a ModelCrashed that names the likely cause and the fix.

Threads, not asyncio subprocesses: the worker must outlive any one event loop (a `models check` and a run may
each open their own), and a blocking pipe read in a thread is cancelled simply by killing the process. One worker
per (module, model file, n_ctx, n_threads) per process, shared by every backend object and role; it is restarted
on the next call after it was killed or died. Every worker is killed at interpreter exit, and a worker exits by
itself when its stdin closes, so none outlives ragdive.
"""

from __future__ import annotations

import atexit
import collections
import json
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigError, ModelCrashed, ModelError

WORKER_MODULE = "ragdive.models.backends.llamacpp_worker"
STARTUP_TIMEOUT_S = 300.0  # loading a large GGUF from a slow disk; the packaged 270M loads in about a second
STDERR_LINES_KEPT = 20

REBUILD_HINT = (
    "a llama-cpp-python build made for another CPU is the usual cause (pip's default -march=native build "
    "crashes on CPUs with AMX). Fix: reinstall it with portable flags: `python scripts/build_llama.py` "
    "from a ragdive checkout, or CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install --no-cache-dir --force-reinstall "
    "llama-cpp-python"
)


class _Killed(Exception):
    """The worker was killed on purpose (a timed-out or cancelled call); nobody is waiting for this reply."""


@dataclass
class Call:
    """One request in flight; ``abandoned`` is set when its caller stopped waiting (timeout, cancellation)."""

    request: dict[str, Any]
    abandoned: threading.Event = field(default_factory=threading.Event)


class WorkerProcess:
    def __init__(self, argv: list[str], label: str) -> None:
        self.argv = argv
        self.label = label  # provider/model, for messages
        self._lock = threading.Lock()  # one request at a time: one llama context is not thread-safe
        self._state = threading.Lock()  # guards _proc and _running against kill() from another thread
        self._proc: subprocess.Popen[str] | None = None
        self._running: Call | None = None
        self._killed = False
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        self._next_id = 0
        self.starts = 0  # how many worker processes were started (tests check restarts)

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def call(self, call: Call) -> dict[str, Any]:
        """Send ``call`` and wait for its reply (blocking; run it in a thread). Raises ModelCrashed when the
        worker dies, ModelError when it answers with an error, _Killed when the call was abandoned."""
        with self._lock:
            if call.abandoned.is_set():
                raise _Killed()
            proc = self._ensure_started()
            self._next_id += 1
            request = {**call.request, "id": self._next_id}
            with self._state:
                if call.abandoned.is_set():  # abandoned while the worker was starting
                    raise _Killed()
                self._running, self._killed = call, False
            try:
                assert proc.stdin is not None and proc.stdout is not None
                try:
                    proc.stdin.write(json.dumps(request) + "\n")
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    pass  # it died; the read below sees EOF and says how
                line = proc.stdout.readline()
            finally:
                with self._state:
                    self._running = None
            if not line:
                if self._killed:
                    raise _Killed()
                raise self._crashed(proc, "during a decode")
            reply: dict[str, Any] = json.loads(line)
            if "error" in reply:
                raise ModelError(f"{self.label}: {reply['error']}", provider="llamacpp", model=self.label)
            return reply

    def start(self) -> None:
        """Start the worker now (blocking) rather than at the first call: the model loads before any timeout runs."""
        with self._lock:
            self._ensure_started()

    def abandon(self, call: Call) -> None:
        """The caller stopped waiting: skip the call if it has not started, kill the worker if it is running
        (llama.cpp cannot be interrupted mid-generation; the next call starts a fresh worker)."""
        call.abandoned.set()
        with self._state:
            if self._running is call:
                self._killed = True
                self._kill_locked()

    def close(self) -> None:
        with self._state:
            self._killed = True
            self._kill_locked()

    def _kill_locked(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def _ensure_started(self) -> subprocess.Popen[str]:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        self._stderr.clear()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", *self.argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
        except OSError as exc:
            raise ModelError(f"{self.label}: cannot start the llama.cpp worker: {exc}", provider="llamacpp") from exc
        self.starts += 1
        threading.Thread(target=self._drain, args=(proc,), daemon=True, name="llamacpp-stderr").start()
        with self._state:
            self._proc = proc
        ready = _read_with_timeout(proc, STARTUP_TIMEOUT_S)
        if not ready:
            raise self._crashed(proc, "while loading the model")
        message = json.loads(ready)
        if "error" in message:
            proc.wait()
            raise ConfigError(f"{self.label}: llama.cpp cannot load the model: {message['error']}")
        return proc

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip():
                self._stderr.append(line.rstrip())

    def _crashed(self, proc: subprocess.Popen[str], when: str) -> ModelCrashed:
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # closed its stdout but lives on: not usable either
            proc.kill()
            code = proc.wait()
        tail = " | ".join(_worth_showing(self._stderr)[-3:])
        return ModelCrashed(
            f"{self.label}: the llama.cpp worker {describe_exit(code)} {when}; {REBUILD_HINT}."
            + (f" Last worker output: {tail[:600]}" if tail else ""),
            provider="llamacpp",
            model=self.label,
            worker_exit=code,
        )


# faulthandler's stack dump: file paths of this machine and no cause; the line naming the fault stays
_STACK_LINES = ("File ", "Extension modules", "Current thread", "Thread 0x", "Stack (most recent", "<no Python")


def _worth_showing(lines: collections.deque[str]) -> list[str]:
    return [line.strip() for line in lines if not line.strip().startswith(_STACK_LINES)]


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        meaning = {"SIGSEGV": "segmentation fault", "SIGILL": "illegal instruction", "SIGABRT": "aborted"}
        return f"died with {name}" + (f" ({meaning[name]})" if name in meaning else "")
    return f"exited with code {code}"


def _read_with_timeout(proc: subprocess.Popen[str], timeout_s: float) -> str:
    """The worker's first line, or '' if it dies (or says nothing) within ``timeout_s``."""
    assert proc.stdout is not None
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout_s)
    if not got:
        proc.kill()
        return ""
    return got[0]


_pool_lock = threading.Lock()
_pool: dict[tuple[str, ...], WorkerProcess] = {}


def worker_for(argv: list[str], label: str) -> WorkerProcess:
    """The process-wide worker for ``argv`` (module and model arguments); started lazily at its first call."""
    key = tuple(argv)
    with _pool_lock:
        if key not in _pool:
            _pool[key] = WorkerProcess(argv, label)
        return _pool[key]


@atexit.register
def _close_all() -> None:
    with _pool_lock:
        for worker in _pool.values():
            worker.close()
