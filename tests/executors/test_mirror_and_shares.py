"""Without Ray: a worker's run directory tailed into batches and applied by the driver gives byte-identical files
(resumed from the driver's copy, nothing sent twice), the per-worker shares of each model's limits add up to no
more than the model allows (for a sweep's runs and for the parts of one run), and a wrong executor option is one
error before anything is written."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from ragdive.cli.main import main
from ragdive.config import ExperimentConfig
from ragdive.config.sweep import SweepConfig
from ragdive.errors import ConfigError, StoreError
from ragdive.executors.ray import _check_reachable, runs_at_once, worker_share
from ragdive.executors.ray_shards import shard_config
from ragdive.executors.ray_worker import SCRATCH_PREFIX, _remove_orphans
from ragdive.pipeline.sweep_plan import plan_sweep
from ragdive.records import ModelSpend, Score, Totals
from ragdive.store import RunStore
from ragdive.store.mirror import RunBatch, RunMirror, RunTail, run_files
from ragdive.store.spend_journal import journal_for
from tests.factories import make_conversation

from ..pipeline.sweep_helpers import base_experiment, write_sweep


def make_score(conversation: str, turn: int, metric: str, value: float) -> Score:
    return Score(conversation_id=conversation, turn_index=turn, metric=metric, value=value)


def test_tailed_batches_rebuild_the_run_on_the_driver_and_resume_sends_only_new_lines(tmp_path: Path) -> None:
    worker = RunStore.create(tmp_path / "worker", run_id="c00-r0", name="w")
    tail, driver = RunTail(worker.path), RunMirror(tmp_path / "driver" / "c00-r0")
    first = make_conversation("a")
    worker.append_conversation(first)
    batch = tail.read()
    assert batch.manifest is not None and [c.id for c in batch.conversations] == ["a"]
    driver.apply(batch)
    assert len(tail.read()) == 0 and tail.read().manifest is None  # nothing new: nothing sent again
    worker.append_scores([make_score("a", 0, "faithfulness", 1.0), make_score("a", 0, "correctness", 0.5)])
    driver.apply(tail.read())
    for name in ("conversations.jsonl", "evaluations.jsonl"):
        assert (driver.path / name).read_bytes() == (worker.path / name).read_bytes()

    # a second worker resumes from the driver's copy: its seed is not sent back, only what it adds
    resumed = RunTail(tmp_path / "worker2" / "c00-r0")
    resumed.seed(run_files(driver.path))
    assert len(resumed.read()) == 0
    RunStore(resumed.path).append_score(make_score("a", 1, "faithfulness", 0.0))
    more = resumed.read()
    assert [(s.turn_index, s.value) for s in more.scores] == [(1, 0.0)]
    driver.apply(more)
    assert len(RunStore(driver.path).scores().records) == 3


def test_a_worker_s_spend_lines_are_journaled_by_the_driver_and_are_its_manifest_spend(tmp_path: Path) -> None:
    worker = RunStore.create(tmp_path / "worker", run_id="c00-r0", name="w")
    tail, driver = RunTail(worker.path), RunMirror(tmp_path / "driver" / "c00-r0")
    journal, _ = journal_for(worker.path)
    for tokens in (10, 20):
        journal.append(ModelSpend(role="judge", model="scripted/j", calls=1, prompt_tokens=tokens))
    journal.append(ModelSpend(role="user", model="scripted/u", calls=1, prompt_tokens=5))
    worker.append_conversation(make_conversation("a"))
    batch = tail.read()
    assert [line.prompt_tokens for line in batch.spend] == [10, 20, 5]
    driver.apply(batch)
    # on the driver's disk before anything else happens: the worker may never write them into a manifest
    assert (driver.path / "spend.jsonl").read_bytes() == (worker.path / "spend.jsonl").read_bytes()
    journal.append(ModelSpend(role="judge", model="scripted/j", calls=1, prompt_tokens=30))
    driver.apply(tail.read())  # a spend line alone, no manifest: the worker was cut off before its next write
    driver.end(raised=KeyboardInterrupt())
    manifest = RunStore(driver.path).read_manifest()
    spend = {(s.role, s.model): (s.calls, s.prompt_tokens, s.journal_lines) for s in manifest.totals.spend}
    assert spend == {("judge", "scripted/j"): (3, 60, 3), ("user", "scripted/u"): (1, 5, 1)}
    assert manifest.status == "interrupted" and manifest.totals.prompt_tokens == 65


def test_records_without_a_manifest_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="before the run's manifest"):
        RunMirror(tmp_path / "run").apply(RunBatch(conversations=[make_conversation("a")]))


def test_worker_shares_of_each_models_limits_add_up_to_at_most_its_limit(tmp_path: Path) -> None:
    base = base_experiment(tmp_path)
    base["models"]["judge"]["max_concurrency"] = 3
    base["models"]["user"]["requests_per_minute"] = 60
    plan = plan_sweep(SweepConfig.model_validate({"base": base, "axes": {"target.top_k": [1, 2]}, "concurrency": 8}))
    runs = runs_at_once(plan, plan.sweep.concurrency)
    assert runs == 3  # capped by the judge's 3, so no share is below one call
    shared = worker_share(plan.cells[0].config, runs)
    judge, user = shared.models.for_role("judge"), shared.models.for_role("user")
    assert judge is not None and user is not None
    assert judge.max_concurrency * runs <= 3 and judge.max_concurrency >= 1
    whole = plan.cells[0].config.models.for_role("user")
    assert whole is not None  # the user's own limit (the default), shared the same way
    assert user.max_concurrency * runs <= whole.max_concurrency and user.max_concurrency >= 1
    assert user.requests_per_minute == pytest.approx(20)
    assert plan.cells[0].config.models.for_role("judge").max_concurrency == 3  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--executor", "dask"], "--executor dask: choose local or ray"),
        (["--address", "10.0.0.1:6379"], "--address is for --executor ray"),
        (["--executor", "ray"], "pip install 'ragdive[ray]'"),
    ],
)
def test_a_wrong_executor_is_one_error_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, extra: list[str], says: str
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as without the extra: `import ray` fails
    path = write_sweep(tmp_path, repeats=1, static=False)
    assert main(["sweep", str(path), "-o", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--executor", "dask"], "--executor dask: choose local or ray"),
        (["--shards", "2"], "--shards is for --executor ray"),
        (["--executor", "ray", "--shards", "2"], "pip install 'ragdive[ray]'"),
    ],
)
def test_a_wrong_executor_for_one_run_is_one_error_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, extra: list[str], says: str
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(base_experiment(tmp_path)))
    assert main(["run", str(path), "--output", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_each_part_of_a_split_run_gets_its_share_of_limits_and_of_the_budget_left(tmp_path: Path) -> None:
    base = base_experiment(tmp_path)
    base["models"]["judge"]["max_concurrency"] = 8
    base["simulation"]["concurrency"] = 9
    base["evaluation"]["concurrency"] = 1
    base["budget"] = {"max_tokens": 1000}
    config = ExperimentConfig.model_validate(base)
    start = Totals(prompt_tokens=300, completion_tokens=100)
    part = shard_config(config, shards=4, at_once=2, run_start=start, seeded=start)
    judge = part.models.for_role("judge")
    assert judge is not None and judge.max_concurrency == 4  # 1/2: two parts at once
    assert part.simulation.concurrency == 4 and part.evaluation.concurrency == 1  # never below one
    assert part.budget.max_tokens == 400 + 600 // 4  # what was spent, plus 1/4 of what is left: four parts in all
    # a part started after two others spent 250 tokens: its worker's totals start there, its share stays 150
    later = shard_config(config, 4, 2, run_start=start, seeded=Totals(prompt_tokens=550, completion_tokens=100))
    assert later.budget.max_tokens == 650 + 150
    assert config.models.for_role("judge").max_concurrency == 8  # type: ignore[union-attr]


def test_an_address_where_nothing_listens_is_one_error_in_seconds() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConfigError, match=f"--address 127.0.0.1:{port}: no Ray cluster answers there"):
        _check_reachable(f"127.0.0.1:{port}", timeout_s=2)
    with socket.socket() as server:  # and one where something does is let through to Ray
        server.bind(("127.0.0.1", 0))
        server.listen()
        _check_reachable(f"ray://127.0.0.1:{server.getsockname()[1]}", timeout_s=2)
    _check_reachable("auto")  # Ray's own forms are Ray's to resolve


def test_a_killed_workers_scratch_directory_is_removed_by_the_next_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    orphan = tmp_path / f"{SCRATCH_PREFIX}{gone.pid}-abc"
    live = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    for path in (orphan, live):
        (path / "runs").mkdir(parents=True)
    _remove_orphans()
    assert not orphan.exists() and live.exists()


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"executor": "dask"}, "--executor dask: choose local or ray"),
        ({"shards": 2}, "--shards is for --executor ray"),
        ({"executor": "ray", "shards": 0}, "--shards 0: at least 1"),
    ],
)
def test_the_python_api_checks_the_executor_before_any_run(
    tmp_path: Path, options: dict[str, object], says: str
) -> None:
    import ragdive

    with pytest.raises(ConfigError, match=says):
        ragdive.run(base_experiment(tmp_path), output=tmp_path / "out", **options)
    assert not (tmp_path / "out").exists()
