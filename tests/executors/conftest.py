"""The Ray executor's tests share one local Ray instance (ray.init(num_cpus=2)): starting one costs seconds."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """One local instance for the session (the executor uses it and leaves it running); workers see the tests'
    import path, so the `tests.pipeline.sweep_helpers:...` responders resolve there."""
    ray = pytest.importorskip("ray", reason="the Ray executor's tests need the extra: pip install 'ragdive[ray]'")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}},
    )
    yield ray
    ray.shutdown()
