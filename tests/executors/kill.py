"""Kill a Ray worker mid-run: the CLI in a subprocess of its own (hence its own local Ray instance, whose workers
inherit a marker in their environment), SIGKILL of one of its RunWorker processes once some scores are written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = "import sys; from ragdive.cli.main import main; sys.exit(main(sys.argv[1:]))"


def kill_a_worker_mid_run(args: list[str], scores: str, out: Path) -> tuple[bool, int, str]:
    """Run ``ragdive <args>`` with a slow judge; SIGKILL one worker once a file matching ``out/<scores>`` has a
    line. Returns whether a worker was killed, the exit code and stderr."""
    marker = f"RAGDIVE_KILL_TEST_{os.getpid()}"
    env = {
        **os.environ,
        "SWEEPTEST_SLOW": "0.15",  # the judge is slow: the kill lands in the middle of scoring
        marker: "1",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    killed = False
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None and not killed:
            scored = [p for p in out.glob(scores) if p.stat().st_size > 0]
            pids = _worker_pids(marker)
            if scored and pids:
                os.kill(pids[0], signal.SIGKILL)
                killed = True
            time.sleep(0.05)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    return killed, proc.returncode, err


def _worker_pids(marker: str) -> list[int]:
    """PIDs of the Ray actor processes running a RunWorker whose environment carries ``marker`` (so only those of
    the run under test, not of another Ray instance on this machine)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if b"RunWorker" in cmdline and marker.encode() in environ:
            pids.append(int(proc.name))
    return pids
