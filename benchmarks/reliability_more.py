"""The reliability harness's rows for what a user meets besides faults and kills (issue 26): two `--resume` of one
run at once, a full disk, a read-only run folder, kill -9s under faults, and planted secrets grepped in every
output. Used by benchmarks/reliability.py; each row compares the run it ends with against the clean run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragdive.store import RunStore

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _start(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragdive", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith(("error:", "unexpected error:"))]
    return lines[-1][:150] if lines else "(no error line)"


def concurrent_resumes(harness: Any, run_partly: Callable[[str], Path]) -> tuple[Path, list[str]]:
    """A run killed midway, then two `--resume` started together (a CI retry beside a manual resume). Returns
    the run and what each resume said (exit code and error line)."""
    run = run_partly("concurrent")
    # answers slowed while they start: on an instant stub the first resume could finish the few conversations
    # left before the second had imported ragdive, and the second then found nothing to do (exit 0, no race)
    harness.stub.latency(SLOW_S)
    try:
        first, second = _start("run", harness.config, "--resume", run), _start("run", harness.config, "--resume", run)
        said = []
        for proc in (first, second):
            _, err = proc.communicate(timeout=600)
            said.append(f"exit {proc.returncode}" + (f": {error_line(err)}" if proc.returncode else ""))
    finally:
        harness.stub.latency(harness.stub.latency_s)
    return run, said


SLOW_S = 0.25
"""Seconds per answer during the two resumes."""


@contextmanager
def small_tmpfs(size: str) -> Iterator[Path | None]:
    """A tmpfs of ``size`` (root only), or None with the reason printed."""
    if os.geteuid() != 0:
        print("  (disk full / read-only rows skipped: mounting a tmpfs needs root)")
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="ragdive-disk-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        print(f"  (disk full / read-only rows skipped: mount refused: {done.stderr.decode().strip()})")
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


def disk_full(harness: Any, disk: Path) -> tuple[Path | None, list[str]]:
    """A run on a disk that fills midway; then room is made and the run resumed."""
    said = []
    first = _start("run", harness.config, "--output", disk)
    _, err = first.communicate(timeout=600)
    said.append(f"full: exit {first.returncode}: {error_line(err)}")
    runs = [p for p in disk.iterdir() if (p / "manifest.json").exists()]
    if not runs:
        return None, said
    remount(disk, "size=64m")
    again = _start("run", harness.config, "--resume", runs[0])
    _, err = again.communicate(timeout=600)
    said.append(f"resumed: exit {again.returncode}" + (f": {error_line(err)}" if again.returncode else ""))
    return runs[0], said


def read_only(harness: Any, disk: Path, run_partly: Callable[[str], Path]) -> tuple[Path, list[str]]:
    """A run killed midway, copied to a disk then made read-only: resume refused in one line; writable again,
    resume completes."""
    run = disk / "ro-run"
    shutil.copytree(run_partly("read-only-source"), run)
    remount(disk, "ro")
    said = []
    refused = _start("run", harness.config, "--resume", run)
    _, err = refused.communicate(timeout=600)
    said.append(f"read-only: exit {refused.returncode}: {error_line(err)}")
    remount(disk, "rw")
    again = _start("run", harness.config, "--resume", run)
    _, err = again.communicate(timeout=600)
    said.append(f"writable: exit {again.returncode}" + (f": {error_line(err)}" if again.returncode else ""))
    return run, said


SECRET = "planted-secret-7c1e94b2a0d5"


def secrets_grep(harness: Any, workdir: Path) -> tuple[int, int, list[str]]:
    """The harness's config with a planted secret as the models' API key and, from ${VAR}, the target's; the run's
    files, cache, report, exports and terminal (with --debug too) grepped. Returns (outputs, leaks, where)."""
    import yaml

    config = yaml.safe_load(harness.config.read_text())
    model = config["models"]["default"]
    model["api_key"] = SECRET
    config["target"]["api_key"] = "${RAGDIVE_PLANTED_SECRET}"
    config["cache"] = {"enabled": True, "dir": str(workdir / "secrets-cache")}
    planted = workdir / "secrets.yaml"
    planted.write_text(yaml.safe_dump(config))
    env = {**_env(), "RAGDIVE_PLANTED_SECRET": SECRET}
    output = workdir / "secrets"
    terminal = []
    for args in (
        ("run", planted, "--output", output),
        ("--debug", "config", "check", planted),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "ragdive", *map(str, args)], capture_output=True, text=True, env=env, check=False
        )
        terminal.append(done.stdout + done.stderr)
    runs = [p for p in output.iterdir() if (p / "manifest.json").exists()]
    if runs:
        exports = workdir / "secrets-export"
        done = subprocess.run(
            [sys.executable, "-m", "ragdive", "export", str(runs[0]), "-o", str(exports), "--format", "csv,deepeval"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        terminal.append(done.stdout + done.stderr)
    files = [p for folder in (output, workdir / "secrets-cache", workdir / "secrets-export") for p in folder.rglob("*")]
    files = [p for p in files if p.is_file()]
    where = [str(p.relative_to(workdir)) for p in files if SECRET.encode() in p.read_bytes()]
    where += [f"terminal {n}" for n, text in enumerate(terminal) if SECRET in text]
    return len(files) + len(terminal), len(where), where


def finished(run: Path) -> bool:
    return RunStore.open(run).read_manifest().status == "finished"
