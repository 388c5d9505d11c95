"""The executor interface (ragdive.executors.base): the API picks an executor from the registry by name and hands it
the work, for one run and for a sweep's runs; the built-in local executor is that interface's base class."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragdive import api
from ragdive.executors import EXECUTORS, Executor, ExecutorRequest, ExecutorType
from ragdive.store import SweepStore
from tests.pipeline.sweep_helpers import write_sweep

SEEN: list[tuple[str, Any]] = []


class Backwards(Executor):
    """A sweep's runs one at a time, last planned first: an order no built-in executor uses."""

    def __init__(self, request: ExecutorRequest) -> None:
        super().__init__(request)
        SEEN.append(("opened", request))

    async def run_all(self, jobs: Any) -> Any:
        results = [await job() for job in reversed(jobs)]
        return results[::-1]

    async def run(self, job: Any) -> tuple[str, str | None]:
        SEEN.append(("run", job.planned.run_id))
        return await job.run_here()

    def close(self) -> None:
        SEEN.append(("closed", None))


@pytest.fixture
def backwards() -> Iterator[None]:
    SEEN.clear()
    EXECUTORS.add("backwards", ExecutorType("last planned first", Backwards))
    yield
    EXECUTORS.remove("backwards")


def test_a_registered_executor_runs_a_sweeps_runs(tmp_path: Path, backwards: None) -> None:
    path, out = write_sweep(tmp_path, repeats=1, static=False), tmp_path / "out"
    result = api.sweep(path, output=out, executor="backwards")
    assert result.status == "finished"
    index = SweepStore.open(out).read()
    planned = [r.run_id for c in index.cells for r in c.runs]
    (opened, request), *runs, closed = SEEN
    assert opened == "opened" and request.sweep is not None and request.address is None
    assert runs == [("run", run_id) for run_id in reversed(planned)] and closed == ("closed", None)
    assert all(r.status == "finished" for c in index.cells for r in c.runs)


def test_the_local_executor_is_the_interfaces_base_and_ray_is_lazy() -> None:
    assert EXECUTORS.get("local").make(ExecutorRequest()).__class__ is Executor
    ray = EXECUTORS.get("ray")
    assert ray.distributed and ray.open == "ragdive.executors.ray:open_ray"  # imported only when chosen
