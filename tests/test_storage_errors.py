"""A full disk, a file-size limit and a read-only run folder are the user's to fix, not bugs: one line naming the
path and the cause, exit 2, the finished work on disk, valid JSON Lines, and `--resume` completes once the cause is
fixed. Real errors, not mocks: RLIMIT_FSIZE (any user) for EFBIG; a small tmpfs for ENOSPC and a read-only
remount for EROFS (as root, where mount is allowed; skipped with the reason otherwise)."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from ragdive.store import RunStore
from tests.pipeline.helpers import write_experiment

ROOT = Path(__file__).resolve().parents[1]


def ragdive(*args: str | Path, file_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run(
        [sys.executable, "-m", "ragdive", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        preexec_fn=limit,  # noqa: PLW1509 - only setrlimit, before exec
    )


def experiment(tmp_path: Path, conversations: int) -> Path:
    """The pipeline tests' experiment without the model cache (its SQLite files would meet the limit first)."""
    config = write_experiment(tmp_path, conversations=conversations)
    config.write_text(re.sub(r"cache: \{dir: [^}]*\}", "cache: {enabled: false}", config.read_text()))
    return config


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "Traceback" not in done.stderr and "this is a bug" not in done.stderr
    return errors[0]


def assert_valid_jsonl(run: Path) -> None:
    for path in run.glob("*.jsonl"):
        if path.stat().st_size:
            frame = pd.read_json(path, lines=True)
            assert len(frame) == len(path.read_text().splitlines())


def the_run(root: Path) -> Path:
    (run,) = [p for p in root.iterdir() if p.is_dir()]
    return run


def test_a_file_size_limit_is_one_line_the_run_failed_with_the_reason_and_resume_completes(tmp_path: Path) -> None:
    config = experiment(tmp_path, 6)
    done = ragdive("run", config, file_limit=7000)
    assert done.returncode == 2
    line = error_line(done)
    run = the_run(tmp_path / "runs")
    assert f"cannot write {run}" in line and "(EFBIG)" in line, line
    manifest = RunStore.open(run).read_manifest()
    assert manifest.status == "failed" and "EFBIG" in (manifest.error or "")
    assert_valid_jsonl(run)  # the part of the batch the limit refused was taken back
    finished_before = RunStore.open(run).finished_conversation_ids()

    resumed = ragdive("run", config, "--resume", run)
    assert resumed.returncode == 0, resumed.stderr
    store = RunStore.open(run)
    assert store.read_manifest().status == "finished"
    assert finished_before < store.finished_conversation_ids() and len(store.current_conversations()) == 6
    assert_valid_jsonl(run)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mount refused here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def remount(mount: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(mount)], check=True)


def test_a_full_disk_is_one_line_and_resume_completes_once_there_is_room(tmp_path: Path, small_tmpfs: Path) -> None:
    config = experiment(tmp_path, 6)
    done = ragdive("run", config, "--output", small_tmpfs)
    assert done.returncode == 2
    line = error_line(done)
    run = the_run(small_tmpfs)
    assert f"cannot write {run}" in line and "no space left on the device (ENOSPC)" in line, line
    assert_valid_jsonl(run)

    remount(small_tmpfs, "size=4m")  # the user frees space
    resumed = ragdive("run", config, "--resume", run)
    assert resumed.returncode == 0, resumed.stderr
    store = RunStore.open(run)
    assert store.read_manifest().status == "finished" and len(store.finished_conversation_ids()) == 6
    assert_valid_jsonl(run)


def test_a_read_only_run_folder_is_one_line_and_readers_still_work(tmp_path: Path, small_tmpfs: Path) -> None:
    remount(small_tmpfs, "size=4m")
    config = experiment(tmp_path, 1)
    assert ragdive("run", config, "--output", small_tmpfs).returncode == 0
    run = the_run(small_tmpfs)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    remount(small_tmpfs, "ro")
    for command in (("run", config, "--resume", run), ("evaluate", run, "--retry-failed")):
        done = ragdive(*command)
        assert done.returncode == 2
        line = error_line(done)
        assert str(run) in line and "read-only file system (EROFS)" in line, line
    assert ragdive("runs", "show", run).returncode == 0  # a reader needs no lock and writes nothing
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before
    remount(small_tmpfs, "rw")
    assert ragdive("run", config, "--resume", run).returncode == 0
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"


def test_an_export_or_a_sheet_the_disk_refuses_is_one_line_naming_the_file(tmp_path: Path) -> None:
    config = experiment(tmp_path, 2)
    assert ragdive("run", config).returncode == 0
    run = the_run(tmp_path / "runs")
    exports, sheets = tmp_path / "exports", tmp_path / "sheets"
    for command, folder in (
        (("export", run, "-o", exports, "--format", "csv,parquet,ragas"), exports),
        (("annotate", "export", run, "-o", sheets / "sheet.csv", "--sample", "4"), sheets),
    ):
        done = ragdive(*command, file_limit=1500)
        assert done.returncode == 2, done.stderr
        line = error_line(done)
        # the file, not 'cannot write a file': pyarrow's and csv's errors carry no name
        assert re.search(rf"cannot write {re.escape(str(folder))}/\S+: file too large", line), line
        assert "(EFBIG)" in line, line
