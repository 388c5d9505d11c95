"""On Ray too, one owner of a run's lifecycle: the driver's copy of a sweep's cell run on a worker, and a run split
among workers, go created -> running -> one final status in the driver's manifest writes (the worker's manifests
are mirrored through the driver's recorder and session, never copied over the driver's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ragdive.cli.main import main
from tests.manifest_writes import ManifestWrites

from ..pipeline.sweep_helpers import base_experiment, write_sweep

pytest.importorskip("ray", reason="the Ray executor's tests need the extra: pip install 'ragdive[ray]'")

pytestmark = pytest.mark.slow


def test_a_sweep_cell_and_a_run_in_parts_on_ray_write_one_final_status(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = ManifestWrites(monkeypatch)
    sweep = write_sweep(tmp_path, repeats=1, static=False, axes={"target.history": ["full", "none"]})
    assert main(["sweep", str(sweep), "-o", str(tmp_path / "sweep"), "--no-cache", "--executor", "ray"]) == 0
    cells = sorted((tmp_path / "sweep" / "runs").iterdir())
    assert len(cells) == 2
    for cell in cells:
        writes.assert_one_session(cell, "finished")

    data = base_experiment(tmp_path)
    data["simulation"].update({"conversations": 4, "max_turns": 2})
    experiment = tmp_path / "experiment.yaml"
    experiment.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "parts"
    assert main(["run", str(experiment), "--output", str(out), "--no-cache", "--executor", "ray", "--shards", "2"]) == 0
    (run,) = out.iterdir()
    writes.assert_one_session(run, "finished")
