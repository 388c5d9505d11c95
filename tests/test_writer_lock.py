"""One writer per run and per sweep directory (store/lock.py), and run files that stay valid JSON Lines after a
torn write (store/torn.py).

The holder in these tests is a real process holding ragdive's lock (what a running `ragdive run --resume` holds
from the moment it opens the run until it ends): deterministic, where racing two real resumes is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from ragdive.cli.main import main
from ragdive.errors import StoreError
from ragdive.store import LOCK_FILE, RunStore, WriterLocked, lock, writer_lock
from tests.factories import make_conversation
from tests.pipeline.helpers import write_experiment
from tests.pipeline.sweep_helpers import write_sweep

HOLD = (
    "import sys\n"
    "from pathlib import Path\n"
    "from ragdive.store import writer_lock\n"
    "with writer_lock(Path(sys.argv[1]), 'ragdive run experiment.yaml --resume the-run'):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.read()\n"
)


@contextmanager
def held_by_another_process(directory: Path) -> Iterator[int]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(directory)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder.pid
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file() and p.name != LOCK_FILE}


def finished_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    config = write_experiment(tmp_path)
    assert main(["run", str(config)]) == 0
    run = Path(capsys.readouterr().out.strip().splitlines()[-1])
    return config, run


def test_a_second_writer_of_a_run_is_refused_naming_the_holder_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, run = finished_run(tmp_path, capsys)
    before = snapshot(run)
    with held_by_another_process(run) as pid:
        for command in (["run", str(config), "--resume", str(run)], ["evaluate", str(run), "--retry-failed"]):
            assert main(command) == 2
            err = capsys.readouterr().err.strip()
            assert err.count("\n") == 0, err  # one line
            assert f"pid {pid} on host" in err and "ragdive run experiment.yaml --resume the-run" in err
            assert str(run) in err
        assert snapshot(run) == before  # not a byte written: manifest and files exact
        # readers never need the lock
        assert main(["runs", "show", str(run)]) == 0
        assert main(["analyze", str(run)]) == 0
        # a write by code that did not take the lock is refused too, before it touches a file
        with pytest.raises(WriterLocked):
            RunStore.open(run).append_conversation(make_conversation("late"))
        assert snapshot(run) == before
    capsys.readouterr()
    assert main(["run", str(config), "--resume", str(run)]) == 0  # once the holder is gone, resume goes ahead
    assert json.loads((run / LOCK_FILE).read_text() or "null") is None  # a clean end names no holder


def test_a_second_sweep_resume_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_sweep(tmp_path, repeats=1, static=False, axes={"target.history": ["full"]})
    out = tmp_path / "out"
    assert main(["sweep", str(path), "-o", str(out)]) == 0
    capsys.readouterr()
    index = (out / "sweep.json").read_bytes()
    with held_by_another_process(out) as pid:
        assert main(["sweep", str(path), "-o", str(out), "--resume"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"pid {pid}" in err and str(out) in err
        assert (out / "sweep.json").read_bytes() == index
    assert main(["sweep", str(path), "-o", str(out), "--resume"]) == 0


def test_a_lock_whose_holder_is_gone_is_taken_over_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, run = finished_run(tmp_path, capsys)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # exited and reaped: its pid is no process
    stale = {"pid": gone.pid, "host": os.uname().nodename, "command": "ragdive run killed.yaml", "started": "then"}
    (run / LOCK_FILE).write_text(json.dumps(stale) + "\n")  # what a kill -9 leaves: a holder named, the lock free
    (run / ".manifest.json.abc123.tmp").write_text("{")  # and an atomic write it cut short
    assert main(["run", str(config), "--resume", str(run)]) == 0
    err = capsys.readouterr().err
    assert f"taking over the writer lock of pid {gone.pid}" in err and "which is gone" in err
    assert not list(run.glob(".*.tmp"))  # cleaned by the writer, now alone


def test_a_holder_on_another_host_is_not_taken_over(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    other = {"pid": 1, "host": "some-other-machine", "command": "ragdive sweep s.yaml", "started": "then"}
    (store.path / LOCK_FILE).write_text(json.dumps(other) + "\n")
    with pytest.raises(StoreError, match="some-other-machine.*if that process is gone, delete"):
        with writer_lock(store.path):
            pass


def test_the_same_process_re_enters_its_lock(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path)
    with writer_lock(store.path), writer_lock(store.path):
        assert lock.holds(store.path)
    assert not lock.holds(store.path)


def test_torn_lines_are_cut_on_resume_kept_aside_and_every_file_reads_with_pandas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, run = finished_run(tmp_path, capsys)
    files = ["conversations.jsonl", "evaluations.jsonl", "rejections.jsonl"]
    torn = {}
    for name in files:
        path = run / name
        whole = path.read_bytes() if path.exists() else b""
        torn[name] = '{"id": "half-written-by-a-kill", "tur'
        path.write_bytes(whole + torn[name].encode())
        with pytest.raises(ValueError):
            pd.read_json(path, lines=True)  # what a crash left: the standard readers fail on it
    assert main(["run", str(config), "--resume", str(run)]) == 0
    for name in files:
        frame = pd.read_json(run / name, lines=True)  # valid JSON Lines again
        assert len(frame) == sum(1 for _ in (run / name).open())
        for line in (run / name).read_text().splitlines():
            json.loads(line)
        side = [json.loads(line) for line in (run / f"{name}.torn").read_text().splitlines()]
        assert [entry["text"] for entry in side] == [torn[name]]  # nothing thrown away
    store = RunStore.open(run)
    assert store.conversations().torn_lines == [] and store.read_manifest().status == "finished"


def test_a_run_session_holds_the_lock_from_start_to_its_final_status(tmp_path: Path) -> None:
    from ragdive.store.session import RunSession

    store = RunStore.create(tmp_path)
    session = RunSession(store)
    session.start()
    assert lock.holds(store.path)
    session.conclude()
    assert not lock.holds(store.path) and store.read_manifest().status == "finished"
