"""The Ray executor on a local Ray instance (ray.init(num_cpus=2)): the same sweep (2 cells × 2 repeats and the
static arm, scripted doubles) gives the same records as the local executor, and a run cut off halfway resumes
through a Ray worker from the driver's copy without a duplicate or a missing score."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragdive.cli.main import main
from ragdive.store import RunStore

from ..pipeline.sweep_helpers import write_sweep
from .kill import kill_a_worker_mid_run
from .records import run_records, same_work

ray = pytest.importorskip("ray", reason="the Ray executor's test needs the extra: pip install 'ragdive[ray]'")

pytestmark = pytest.mark.slow


def _sweep(tmp_path: Path) -> Path:
    path = write_sweep(tmp_path, repeats=2, concurrency=2)
    data = yaml.safe_load(path.read_text())
    data["axes"] = {"target.history": ["full", "none"]}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _records(sweep_dir: Path) -> dict[str, Any]:
    return {run_dir.name: run_records(run_dir) for run_dir in sorted((sweep_dir / "runs").iterdir())}


def _run(sweep: Path, out: Path, *extra: str) -> None:
    assert main(["sweep", str(sweep), "-o", str(out), "--no-cache", *extra]) == 0


def test_ray_sweep_writes_the_same_records_as_the_local_one_and_resumes(local_ray: Any, tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    _run(sweep, tmp_path / "local")
    _run(sweep, tmp_path / "ray", "--executor", "ray")
    local, distributed = _records(tmp_path / "local"), _records(tmp_path / "ray")
    assert sorted(distributed) == ["c00-r0", "c00-r1", "c00-static", "c01-r0", "c01-r1", "c01-static"]
    assert all(run["status"] == "finished" and run["scores"] for run in distributed.values())
    assert distributed == local
    tables = json.loads((tmp_path / "ray" / "tables.json").read_text())
    assert tables == json.loads((tmp_path / "local" / "tables.json").read_text())
    assert json.loads((tmp_path / "ray" / "sweep.json").read_text())["status"] == "finished"

    # cut a finished run back to half its scores, as a kill during scoring leaves it; --resume on Ray finishes it
    run = tmp_path / "ray" / "runs" / "c01-r1"
    lines = (run / "evaluations.jsonl").read_text().splitlines(keepends=True)
    (run / "evaluations.jsonl").write_text("".join(lines[: len(lines) // 2]))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest))
    _run(sweep, tmp_path / "ray", "--executor", "ray", "--resume")
    resumed = _records(tmp_path / "ray")
    assert resumed["c01-r1"]["lines"] == len(lines)  # the missing half once each: none twice, none lost
    assert resumed["c01-r1"]["scores"] == local["c01-r1"]["scores"]
    assert resumed["c01-r1"]["status"] == "finished"


def test_a_ray_sweep_cancelled_midway_marks_its_runs_and_resumes_to_the_local_result(
    local_ray: Any, tmp_path: Path
) -> None:
    from ragdive.config import load_config
    from ragdive.config.sweep import SweepConfig
    from ragdive.executors.ray import RayExecutor
    from ragdive.pipeline.sweep import open_sweep, run_sweep, static_dataset_path
    from ragdive.pipeline.sweep_plan import plan_sweep

    sweep = _sweep(tmp_path)
    _run(sweep, tmp_path / "local")
    plan = plan_sweep(load_config(sweep, SweepConfig), sweep)
    dataset = static_dataset_path(plan, sweep)
    store = open_sweep(plan, tmp_path / "ray", resume=False)
    executor = RayExecutor.for_plan(plan)

    async def cut_midway() -> None:
        task = asyncio.create_task(run_sweep(plan, store, static_dataset=dataset, executor=executor, no_cache=True))
        for _ in range(600):  # cancel once the driver holds some scores (or the sweep ended: a valid case too)
            if task.done() or any((tmp_path / "ray" / "runs").glob("*/evaluations.jsonl")):
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cut_midway())
    executor.close()
    assert json.loads((tmp_path / "ray" / "sweep.json").read_text())["status"] == "interrupted"
    for run in (tmp_path / "ray" / "runs").iterdir():  # none left "running" by a worker that was cut off
        assert RunStore.open(run).read_manifest().status in {"finished", "interrupted"}

    _run(sweep, tmp_path / "ray", "--executor", "ray", "--resume")
    # a cancelled worker's last judge calls reach the driver through its mirrored spend journal
    same_work(_records(tmp_path / "ray"), _records(tmp_path / "local"))


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds Ray's worker processes through /proc")
def test_a_worker_killed_mid_run_fails_that_run_alone_and_resume_redoes_it_to_the_local_result(
    local_ray: Any, tmp_path: Path
) -> None:
    """SIGKILL of a Ray worker process while its run is being scored: the driver records that run `failed` (its
    records so far kept), the other runs go on, and `--resume` redoes it with no record lost or doubled."""
    sweep = _sweep(tmp_path)
    _run(sweep, tmp_path / "local")
    out = tmp_path / "ray"
    args = ["sweep", str(sweep), "-o", str(out), "--no-cache", "--executor", "ray"]
    killed, code, err = kill_a_worker_mid_run(args, "runs/*/evaluations.jsonl", out)
    assert killed, f"no worker was caught mid-run (sweep exit {code}): {err[-2000:]}"
    statuses = {run.name: RunStore.open(run).read_manifest() for run in (out / "runs").iterdir()}
    failed = [name for name, manifest in statuses.items() if manifest.status == "failed"]
    assert len(failed) == 1, {name: m.status for name, m in statuses.items()}
    assert "ray worker" in (statuses[failed[0]].error or "")
    assert all(m.status == "finished" for name, m in statuses.items() if name not in failed)

    _run(sweep, out, "--executor", "ray", "--resume")
    # the killed run's lines once each: none lost or twice
    same_work(_records(out), _records(tmp_path / "local"), all_spend_recorded=False)
