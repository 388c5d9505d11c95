"""The reliability harness (benchmarks/reliability.py), small: real `ragdive run` processes against the fault stub
at a 0.5 fault rate per family and under random kill -9s. Nothing lost, nothing duplicated, no score from a fault."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "benchmarks" / "reliability.py"


@pytest.mark.slow
def test_faults_and_kills_lose_nothing_and_score_nothing_from_a_fault(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("reliability_harness", HARNESS)
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = harness  # dataclasses look their module up there
    spec.loader.exec_module(harness)
    rows = harness.measure(conversations=3, turns=2, rates=[0.5], kills=3, seed=3, keep=tmp_path)
    assert [r.label for r in rows] == ["no faults", "transport 0.5", "content 0.5", "3x kill -9"]
    for row in rows:
        assert row.lost == {"conversations": 0, "turns": 0, "scores": 0}, row.label
        assert row.duplicated == {"conversations": 0, "scores": 0}, row.label
        assert row.from_fault == 0, (row.label, row.examples)
    clean, transport, _, killed = rows
    assert clean.requests_per_call == 1.0 and transport.requests_per_call > 1.0  # faults cost retries
    assert killed.target_changed == 0 and killed.errors == 0  # killed and resumed: the clean run, exactly
