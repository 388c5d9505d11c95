"""Is the process that runs a run still there? A run killed with SIGKILL, or by a power cut, cannot say that it
stopped, so its manifest keeps ``running``; readers show it as ``stale`` instead. Derived on display only: the
manifest is never rewritten by a reader.

A pid is compared only on the host that wrote it. On Linux, the process start time and the boot id from /proc
also tell a pid that was reused by another process (or a run from before a reboot); elsewhere a live pid is
taken at its word.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from ..records import RunManifest, RunProcess

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from field 3 (state) on; the command name before it may hold spaces and parentheses."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _start_ticks(pid: int) -> int | None:
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields else None  # field 22, starttime
    except (IndexError, ValueError):
        return None


def _boot_id() -> str | None:
    try:
        return (PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip() or None
    except OSError:
        return None


def this_process() -> RunProcess:
    """What a run's manifest records about the process running it."""
    pid = os.getpid()
    return RunProcess(pid=pid, host=socket.gethostname(), start_ticks=_start_ticks(pid), boot_id=_boot_id())


def process_alive(process: RunProcess) -> bool | None:
    """True or False on the host that wrote ``process``; None on another host, where nobody can tell."""
    if process.host != socket.gethostname():
        return None
    if process.boot_id and (boot := _boot_id()) and boot != process.boot_id:
        return False  # the machine rebooted since
    try:
        os.kill(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    fields = _stat_fields(process.pid)
    if fields and fields[0] == "Z":
        return False  # exited, not yet reaped by its parent
    if process.start_ticks is not None and (ticks := _start_ticks(process.pid)) is not None:
        return ticks == process.start_ticks  # a different start time: the pid was reused
    return True


def shown_status(manifest: RunManifest) -> str:
    """The status to display: ``stale`` for a run marked running whose process is gone on this host."""
    if manifest.status == "running" and manifest.process is not None and process_alive(manifest.process) is False:
        return "stale"
    return manifest.status
