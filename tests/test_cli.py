from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.store import RunRecorder, RunStore


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a fresh interpreter: what a user sees."""
    return subprocess.run(
        [sys.executable, "-m", "ragdive", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_version_and_help() -> None:
    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("ragdive ")
    assert "runs" in run_cli("--help").stdout


def test_version_loads_no_command_and_help_lists_every_one() -> None:
    """Commands are imported on first use: `--version` pays for typer and nothing of the tool (it took ~0.9 s when
    every command module was imported up front), and `--help` still lists every command."""
    from ragdive.cli.lazy import COMMANDS

    probe = (
        "import sys; from ragdive.cli.main import main; code = main(['--version']); "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pydantic', 'rich') "
        "or m.startswith(('ragdive.records', 'ragdive.store', 'ragdive.cli.run', 'ragdive.cli.analyze'))); "
        "print(code, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines()[-1] == "0 []", out.stdout
    listed = run_cli("--help").stdout
    assert all(f" {name} " in listed for name in COMMANDS)


def test_user_error_is_one_line_without_traceback_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("simulation: {max_turns: lots}\n")
    out = run_cli("config", "check", str(bad))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "simulation.max_turns: got 'lots'" in out.stderr
    assert out.stderr.strip().count("\n") == 0

    debug = run_cli("--debug", "config", "check", str(bad))
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_runs_list_prints_both_runs_and_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    RunStore.create(tmp_path, run_id="20260101-000000-aaaaaa", name="first")
    RunStore.create(tmp_path, run_id="20260102-000000-bbbbbb", name="second")
    out = run_cli("runs", "list", str(tmp_path))
    assert out.returncode == 0
    assert "20260101-000000-aaaaaa" in out.stdout and "20260102-000000-bbbbbb" in out.stdout

    missing = run_cli("runs", "list", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"error: no runs folder at {tmp_path / 'nope'}"


def test_runs_show_summarises_the_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore.create(tmp_path, seed=7, models={"judge": "scripted/j"}, target="reference (bm25, k=4)")
    assert main(["runs", "show", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert store.path.name in out and "judge=scripted/j" in out and "cost unknown" in out


def test_runs_list_and_show_tell_a_run_whose_process_is_gone(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # exited and reaped: its pid is no longer a process
    gone = RunStore.create(tmp_path, run_id="20260101-000000-aaaaaa")
    RunRecorder(gone).start()
    manifest = gone.read_manifest()
    process = manifest.process.model_copy(update={"pid": child.pid})
    gone._write_manifest(manifest.model_copy(update={"process": process}))
    alive = RunStore.create(tmp_path, run_id="20260102-000000-bbbbbb")
    RunRecorder(alive).start()  # this test's own process: alive while runs list looks

    listed = run_cli("runs", "list", str(tmp_path)).stdout
    rows = {cells[0]: cells for cells in map(str.split, listed.splitlines()) if cells and cells[0].startswith("2026")}
    assert rows["20260101-000000-aaaaaa"][4] == "stale" and rows["20260102-000000-bbbbbb"][4] == "running"
    shown = run_cli("runs", "show", str(gone.path)).stdout
    assert "status stale" in shown and f"pid {child.pid}" in shown and "gone without recording" in shown
    assert "status running" in run_cli("runs", "show", str(alive.path)).stdout
    assert gone.read_manifest().status == "running"  # a reader never rewrites the manifest


def test_config_check_masks_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDIVE_SECRET", "sk-very-secret")
    cfg = tmp_path / "exp.yaml"
    cfg.write_text("models:\n  judge: {model: openai/gpt-4o-mini, api_key: '${RAGDIVE_SECRET}'}\n")
    out = subprocess.run(
        [sys.executable, "-m", "ragdive", "config", "check", str(cfg)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "sk-very-secret" not in out.stdout
    assert "api_key: '***'" in out.stdout
    assert "max_attempts: 3" in out.stdout  # defaults are shown resolved


def test_an_unexpected_error_exits_1_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragdive.cli import runs

    def boom(_: Path) -> list[RunStore]:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(runs, "list_runs", boom)
    assert main(["runs", "list", "x"]) == 1
    assert "bug in ragdive" in capsys.readouterr().err


def test_one_corrupt_manifest_is_named_and_the_other_runs_still_listed(tmp_path: Path) -> None:
    RunStore.create(tmp_path, run_id="20260101-000000-aaaaaa")
    broken = RunStore.create(tmp_path, run_id="20260102-000000-bbbbbb")
    manifest = broken.path / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"turns": 0', '"turns": "many"'))
    out = run_cli("runs", "list", str(tmp_path))
    assert out.returncode == 0 and "20260101-000000-aaaaaa" in out.stdout and "unreadable" in out.stdout
    (warning,) = out.stderr.strip().splitlines()  # one line, naming the file and the field, no pydantic report
    assert "20260102-000000-bbbbbb" in warning and "totals.turns" in warning and "Traceback" not in out.stderr

    shown = run_cli("runs", "show", str(broken.path))
    assert shown.returncode == 2 and shown.stderr.count("\n") == 1 and "totals.turns" in shown.stderr
