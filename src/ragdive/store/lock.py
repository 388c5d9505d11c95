"""One writer per run directory and per sweep directory: an advisory lock held for a whole command.

Two `--resume` of one run (a CI retry beside a manual resume) both ran to the end: every conversation and score
written and paid for twice. Now a command that writes a directory holds ``.ragdive.lock`` in it from the moment
it opens the directory until it ends; a second writer is refused at once with one line naming the holder (pid,
host, command, since when). Readers (`report`, `analyze`, `runs show`, `export`) never take it.

The lock is the kernel's (``fcntl.flock`` on the open file), not the file's existence: a holder killed with
SIGKILL or by a crash releases it with its last file descriptor, so nothing is left to clean by hand. The file
says who holds it (one JSON line, rewritten by each holder, emptied on release): a next writer that finds a
holder written there but the lock free knows the holder died and says that it takes over. A lock file that
names a live process on this host while the lock is free (a filesystem without flock support) is refused,
and so is one naming another host, where nobody here can tell whether its holder is alive.

flock rather than the ``filelock`` package: filelock truncates the file when it *tries* to lock, so a refused
second writer would erase the holder it should name. Locks are counted per process: a command that opens its run
twice (simulate, then evaluate) re-enters its own lock.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import StoreError, storage_error
from ..records import RunProcess
from ..redaction import redact_text
from .liveness import process_alive, this_process
from .torn import cut_torn_tails

LOCK_FILE = ".ragdive.lock"


class WriterLocked(StoreError):
    """Another process is writing this run or sweep directory (exit 2: wait for it, or stop it, then retry)."""


@dataclass
class _Held:
    fd: int
    count: int


_held: dict[Path, _Held] = {}
_guard = threading.Lock()


def _notice(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


notify: Callable[[str], None] = _notice
"""Where a taken-over lock is told (stderr; tests replace it)."""


def command_line() -> str:
    """What this process was started as, secrets masked, cut to a readable length."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program == "__main__.py":  # python -m ragdive
        program = Path(sys.argv[0]).parent.name or "python"
    argv = [program, *sys.argv[1:]]
    return redact_text(" ".join(argv))[:300]


def _key(directory: Path) -> Path:
    return Path(os.path.realpath(directory))


def _read_holder(fd: int) -> dict[str, Any] | None:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    try:
        holder = json.loads(data.decode("utf-8", errors="replace")) if data.strip() else None
    except json.JSONDecodeError:
        return None
    return holder if isinstance(holder, dict) else None


def _describe(holder: dict[str, Any] | None) -> str:
    if holder is None:
        return "another process (its lock file names no holder)"
    return (
        f"pid {holder.get('pid')} on host {holder.get('host')}, since {holder.get('started')}: "
        f"{holder.get('command') or 'unknown command'}"
    )


def _process(holder: dict[str, Any]) -> RunProcess | None:
    try:
        return RunProcess.model_validate({k: holder.get(k) for k in ("pid", "host", "start_ticks", "boot_id")})
    except ValueError:
        return None


def _open(directory: Path) -> int:
    try:
        return os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise storage_error(exc, directory / LOCK_FILE, "cannot take the writer lock in") from exc


def _refuse(directory: Path, holder: dict[str, Any] | None) -> WriterLocked:
    return WriterLocked(
        f"{directory} is being written by {_describe(holder)}; wait for it to end (or stop it), then run again"
    )


def _acquire(directory: Path, command: str | None) -> int:
    fd = _open(directory)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise _refuse(directory, _read_holder(fd)) from None
            raise
        previous = _read_holder(fd)
        if previous is not None:
            process = _process(previous)
            alive = process_alive(process) if process is not None else None
            if alive is not False:  # alive here (no flock on this filesystem?) or on a host we cannot see
                fcntl.flock(fd, fcntl.LOCK_UN)
                raise WriterLocked(
                    f"{directory} is being written by {_describe(previous)}"
                    + (
                        f"; if that process is gone, delete {directory / LOCK_FILE} and run again"
                        if alive is None
                        else "; wait for it to end (or stop it), then run again"
                    )
                )
            notify(f"{directory}: taking over the writer lock of {_describe(previous)}, which is gone")
        me = this_process().model_dump(mode="json")
        me |= {"command": command or command_line(), "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
        line = (json.dumps(me) + "\n").encode("utf-8")
        os.ftruncate(fd, 0)
        os.pwrite(fd, line, 0)
        os.fsync(fd)
        _clean_temporary_files(directory)
        cut_torn_tails(directory)  # a resume starts from whole lines (see torn.py)
    except OSError as exc:
        _release(fd)
        raise storage_error(exc, None, "cannot open for writing") from exc
    except BaseException:
        os.close(fd)
        raise
    return fd


def _clean_temporary_files(directory: Path) -> None:
    """Temporary files of an atomic write a kill interrupted (``.manifest.json.x1y2.tmp``): only the writer, now
    alone, may remove them."""
    for stray in directory.glob(".*.tmp"):
        stray.unlink(missing_ok=True)


def _release(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)  # no holder named: the next writer has nothing to take over
    except OSError:
        pass  # a full or read-only disk: the kernel releases the lock all the same
    finally:
        os.close(fd)  # closing the last descriptor releases the flock


def acquire(directory: Path, command: str | None = None) -> Callable[[], None]:
    """Take the writer lock of ``directory`` (which must exist), or re-enter this process's; returns the function
    that gives this hold back. Raises WriterLocked when another process holds it. A hold never given back ends
    with the process (atexit, and the kernel's release for a process that could not run it)."""
    key = _key(directory)
    with _guard:
        held = _held.get(key)
        if held is not None:
            held.count += 1
        else:
            _held[key] = _Held(_acquire(Path(directory), command), 1)
    released = False

    def release() -> None:
        nonlocal released
        if released:
            return
        released = True
        with _guard:
            held = _held.get(key)
            if held is None:
                return
            held.count -= 1
            if held.count == 0:
                del _held[key]
                _release(held.fd)

    return release


@contextmanager
def writer_lock(directory: Path, command: str | None = None) -> Iterator[Path]:
    """Hold the writer lock of ``directory`` for the block (see ``acquire``)."""
    release = acquire(directory, command)
    try:
        yield _key(directory)
    finally:
        release()


@atexit.register
def _release_all() -> None:
    """A clean exit names no holder in the lock file, so the next writer has no takeover to tell."""
    with _guard:
        for held in _held.values():
            _release(held.fd)
        _held.clear()


def holds(directory: Path) -> bool:
    """Whether this process holds the writer lock of ``directory``."""
    return _key(directory) in _held


def check_writable(directory: Path) -> None:
    """For a write by code that did not take the lock (a tool, a test, an import's staging folder): refused while
    another process holds it; otherwise the write goes ahead without holding it."""
    if holds(directory) or not (Path(directory) / LOCK_FILE).exists():
        return
    try:
        fd = os.open(Path(directory) / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise _refuse(Path(directory), _read_holder(fd)) from None
            return
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
