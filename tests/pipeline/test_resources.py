"""Every model a run builds is closed exactly once, in the run's one event loop, however the run ends: finished,
a target that is down, a config mistake found after some models were built."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import ragdive
from ragdive.models import Model
from ragdive.store import list_runs

from .helpers import write_experiment


@pytest.fixture
def closed(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Model name -> how many times it was closed."""
    counts: Counter[str] = Counter()
    original = Model.aclose

    async def counting(self: Model) -> None:
        counts[self.name] += 1
        await original(self)

    monkeypatch.setattr(Model, "aclose", counting)
    return counts


ROLES = {"scripted/user": 1, "scripted/validator": 1, "scripted/judge": 1}


def test_a_finished_run_closes_each_model_once(tmp_path: Path, closed: Counter[str]) -> None:
    assert ragdive.run(write_experiment(tmp_path), no_cache=True).status == "finished"
    assert closed == ROLES


def test_a_run_whose_target_is_down_fails_and_still_closes_each_model_once(
    tmp_path: Path, closed: Counter[str]
) -> None:
    config = write_experiment(tmp_path, conversations=4, max_turns=1)
    config.write_text(config.read_text().replace("helpers:answer", "helpers:down"))
    with pytest.raises(ragdive.TargetError, match="never answered"):
        ragdive.run(config, no_cache=True)
    (store,) = list_runs(tmp_path / "runs")
    assert store.read_manifest().status == "failed"
    assert closed == ROLES


def test_a_target_that_cannot_be_built_closes_the_models_built_before_it_and_leaves_no_run(
    tmp_path: Path, closed: Counter[str]
) -> None:
    config = write_experiment(tmp_path)
    config.write_text(config.read_text().replace("helpers:answer", "helpers:no_such_function"))
    with pytest.raises(ragdive.ConfigError):
        ragdive.run(config, no_cache=True)
    assert not (tmp_path / "runs").exists() or list_runs(tmp_path / "runs") == []
    assert closed == ROLES
