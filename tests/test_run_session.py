"""One owner of a run's lifecycle (ragdive.store.session): every manifest write of a scripted `ragdive run`,
`simulate`, `evaluate`, `static`, `replay` and a sweep's cells, recorded as the status it wrote, goes created ->
running -> one final status, that final status written once and last; a cancelled run writes `interrupted` once.
(A run split among Ray workers and a sweep's cell on Ray: tests/executors/test_ray_session.py.)"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

import ragdive
from ragdive.cli.main import main
from ragdive.errors import BudgetExceeded
from ragdive.records import RunManifest
from ragdive.store import Ending, RunStore, decide_ending
from tests.manifest_writes import ManifestWrites
from tests.pipeline.helpers import write_experiment
from tests.pipeline.sweep_helpers import write_sweep
from tests.pipeline.test_replay import target_file


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> ManifestWrites:
    return ManifestWrites(monkeypatch)


def _run_dir(out: str) -> Path:
    return Path(out.strip().splitlines()[-1])


def test_run_simulate_evaluate_and_replay_each_write_one_final_status(
    tmp_path: Path, writes: ManifestWrites, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_experiment(tmp_path)
    assert main(["run", str(config), "--no-cache"]) == 0
    run = _run_dir(capsys.readouterr().out)
    # scoring runs while simulating: the run is never "finished" before it is scored
    writes.assert_one_session(run, "finished")

    assert main(["simulate", str(config), "--no-cache"]) == 0
    simulated = _run_dir(capsys.readouterr().out)
    writes.assert_one_session(simulated, "finished")

    before = len(writes.of(simulated))
    assert main(["evaluate", str(simulated)]) == 0
    capsys.readouterr()
    scoring = writes.of(simulated)[before:]  # a session that adds to a run: running -> finished
    assert scoring[0] == "running" and scoring[-1] == "finished" and scoring.count("finished") == 1, scoring
    assert set(scoring) == {"running", "finished"}

    assert main(["replay", str(run), "--target", str(target_file(tmp_path))]) == 0
    replayed = _run_dir(capsys.readouterr().out)
    writes.assert_one_session(replayed, "finished")


def test_a_spent_budget_and_a_failure_are_written_once(
    tmp_path: Path, writes: ManifestWrites, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("spent", "down"):
        (tmp_path / name).mkdir()
    spent = write_experiment(tmp_path / "spent", extra="budget: {max_tokens: 1}\n")
    assert main(["run", str(spent), "--no-cache"]) == 3
    writes.assert_one_session(_run_dir(capsys.readouterr().out), "budget_exceeded")

    down = write_experiment(tmp_path / "down")
    down.write_text(down.read_text().replace("tests.pipeline.helpers:answer", "tests.pipeline.helpers:down"))
    assert main(["run", str(down), "--no-cache"]) != 0
    (run,) = (tmp_path / "down" / "runs").iterdir()
    writes.assert_one_session(run, "failed")
    assert "never answered" in (RunStore.open(run).read_manifest().error or "")


def test_a_sweep_s_cells_and_its_static_arm_each_write_one_final_status(
    tmp_path: Path, writes: ManifestWrites, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    path = write_sweep(tmp_path, repeats=1, axes={"target.history": ["full", "none"]})
    assert main(["sweep", str(path), "-o", str(out)]) == 0
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 4 and sum(r.name.endswith("static") for r in runs) == 2  # two cells, each with its static arm
    for run in runs:
        writes.assert_one_session(run, "finished")


async def _cancel_once_running(config: Path, output: Path) -> Path:
    task = asyncio.ensure_future(ragdive.arun(config, output=output, no_cache=True))
    while not any((p / "conversations.jsonl").is_file() for p in output.glob("*")):  # the first one written
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (run,) = output.iterdir()
    return run


def test_a_cancelled_run_writes_interrupted_once(
    tmp_path: Path, writes: ManifestWrites, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIPETEST_SLOW_JUDGE", "1")  # the cancellation lands while the judge is scoring
    config = write_experiment(tmp_path, conversations=4)
    run = asyncio.run(_cancel_once_running(config, tmp_path / "runs"))
    writes.assert_one_session(run, "interrupted")
    assert RunStore.open(run).read_manifest().status == "interrupted"


def test_the_final_status_is_decided_in_one_place() -> None:
    finished = Ending("finished")
    assert decide_ending(finished, None, None) == finished
    assert decide_ending(None, asyncio.CancelledError(), None) == Ending("interrupted")
    assert decide_ending(None, BudgetExceeded("cap"), None) == Ending("budget_exceeded", "budget exceeded: cap")
    assert decide_ending(None, ValueError("bug"), None) == Ending("failed", "ValueError: bug")
    # scoring a run whose simulation failed does not make it look finished
    failed = RunManifest(run_id="r", status="failed", error="target down")
    assert decide_ending(finished, None, failed) == Ending("failed", "target down")
    assert decide_ending(Ending("planned"), None, None).status == "failed"  # a stage that never made its run


SRC = Path(__file__).resolve().parents[1] / "src" / "ragdive"


def _calls(attribute: str) -> list[tuple[str, str]]:
    """(file, receiver source) of every call of ``.<attribute>(...)`` in the package."""
    found = []
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attribute:
                found.append((str(path.relative_to(SRC)), ast.get_source_segment(text, node.func.value) or ""))
    return found


def test_only_the_session_starts_and_finishes_a_run_and_only_the_store_writes_its_manifest() -> None:
    for attribute in ("start", "finish"):
        callers = {file for file, receiver in _calls(attribute) if "recorder" in receiver.lower()}
        assert callers <= {"store/session.py"}, (attribute, callers)
    assert {file for file, _ in _calls("_write_manifest")} == {"store/run.py"}


def test_conversations_finishing_together_share_a_manifest_write_and_the_last_one_is_exact(
    tmp_path: Path, writes: ManifestWrites, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.simulation import runner
    from ragdive.store.spend_journal import read_journal

    monkeypatch.setattr(runner, "RECORD_EVERY_S", 3600.0)  # only the first conversation's write is due
    config = write_experiment(tmp_path, conversations=6)
    assert main(["simulate", str(config), "--no-cache"]) == 0
    run = _run_dir(capsys.readouterr().out)
    writes.assert_one_session(run, "finished")
    running = writes.of(run).count("running")
    assert running <= 4, writes.of(run)  # start, the first conversation, the end of the work: not one per conversation
    store = RunStore.open(run)
    totals = store.read_manifest().totals
    assert totals.conversations == 6 == len(store.current_conversations())
    assert totals.turns == sum(len(c.turns) for c in store.current_conversations())
    journaled = {key: len(lines) for key, lines in read_journal(run).items()}
    assert journaled and {(s.role, s.model): s.journal_lines for s in totals.spend} == journaled
