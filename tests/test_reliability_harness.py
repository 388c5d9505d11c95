"""The reliability harness (benchmarks/reliability.py), small: real `ragdive run` processes against the fault stub
at a 0.5 fault rate per family and under random kill -9s. Nothing lost, nothing duplicated, no score from a fault."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "benchmarks" / "reliability.py"


def load_harness() -> Any:
    spec = importlib.util.spec_from_file_location("reliability_harness", HARNESS)
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = harness  # dataclasses look their module up there
    spec.loader.exec_module(harness)
    return harness


@pytest.mark.slow
def test_faults_and_kills_lose_nothing_and_score_nothing_from_a_fault(tmp_path: Path) -> None:
    harness = load_harness()
    rows = harness.measure(conversations=3, turns=2, rates=[0.5], kills=3, seed=3, keep=tmp_path, extra=False)
    assert [r.label for r in rows] == ["no faults", "transport 0.5", "content 0.5", "3x kill -9"]
    for row in rows:
        assert row.lost == {"conversations": 0, "turns": 0, "scores": 0}, row.label
        assert row.duplicated == {"conversations": 0, "scores": 0}, row.label
        assert row.from_fault == 0, (row.label, row.examples)
    clean, transport, _, killed = rows
    assert clean.requests_per_call == 1.0 and transport.requests_per_call > 1.0  # faults cost retries
    assert killed.target_changed == 0 and killed.errors == 0  # killed and resumed: the clean run, exactly


@pytest.mark.slow
def test_two_resumes_a_full_disk_read_only_kills_under_faults_and_secrets(tmp_path: Path) -> None:
    harness = load_harness()
    rows = {r.label: r for r in harness.measure(conversations=4, turns=2, rates=[], kills=2, seed=5, keep=tmp_path)}
    concurrent = rows["2 resumes"]
    assert sorted(line.split(":")[0] for line in concurrent.said) == ["exit 0", "exit 2"], concurrent.said
    assert "is being written by pid" in " ".join(concurrent.said)
    assert sorted(concurrent.exits) == [0, 2] and concurrent.exit_code in (0, 2), concurrent.exits
    for label in ("2 resumes", "disk full", "read-only", "2x kill, tr 0.2"):
        if label not in rows:  # disk rows need root to mount a tmpfs
            continue
        assert rows[label].lost == {"conversations": 0, "turns": 0, "scores": 0}, (label, rows[label].said)
        assert rows[label].duplicated == {"conversations": 0, "scores": 0}, label
    if "disk full" in rows:
        assert "(ENOSPC)" in rows["disk full"].said[0] and rows["disk full"].said[1] == "resumed: exit 0"
        assert rows["disk full"].exits == [2, 0] and rows["read-only"].exits == [2, 0]
        assert "(EROFS)" in rows["read-only"].said[0] and rows["read-only"].said[1] == "writable: exit 0"
    assert rows["secrets grep"].said[0].endswith(", 0 with the secret"), rows["secrets grep"].said


@pytest.mark.slow
def test_ten_kills_lose_no_spend_but_the_calls_in_flight(tmp_path: Path) -> None:
    """Spend is durable (issue 24): after 10 kill -9s across simulation and scoring, the manifest's model requests
    and prompt tokens equal what the stub served, minus at most the requests it was answering at each kill; a run
    without kills records exactly what was served. Each row also says how the run ended."""
    harness = load_harness()
    clean, killed = harness.measure(conversations=6, turns=3, rates=[], kills=10, seed=7, keep=tmp_path, extra=False)
    assert (clean.status, clean.exit_code, clean.spend_calls, clean.spend_tokens) == ("finished", 0, 1.0, 1.0)
    assert killed.status == "finished" and killed.exit_code == 0
    # everything counted is in the manifest (the journal's lines recovered after each kill), and what the stub
    # served beyond it is no more than what reached it just before a kill
    assert killed.recorded_calls == killed.journaled
    assert killed.unrecorded is not None and 0 <= killed.unrecorded <= killed.in_flight_at_kills
    assert killed.spend_calls is not None and killed.spend_calls <= 1.0


@pytest.mark.slow
def test_ten_kills_of_a_ray_driver_lose_no_spend_but_the_calls_in_flight(tmp_path: Path) -> None:
    """The same on the Ray executor (a run in 2 parts): each kill -9 takes the driver and its local cluster down at
    once, so what the workers spent reaches the manifest only through the mirrored spend journals. In flight here
    is what reached the stub within IN_FLIGHT_S + its latency + one driver poll (0.25 s) before a kill: its answer
    not yet read, or its journal line not yet drained to the driver."""
    pytest.importorskip("ray")
    harness = load_harness()
    clean, killed = harness.measure(
        conversations=6,
        turns=3,
        rates=[],
        kills=10,
        seed=7,
        keep=tmp_path,
        extra=False,
        run_args=("--executor", "ray", "--shards", "2"),
        latency_s=0.5,  # work enough for every kill to land in it
    )
    assert (clean.status, clean.exit_code, clean.spend_calls, clean.spend_tokens) == ("finished", 0, 1.0, 1.0)
    assert killed.status == "finished" and killed.exit_code == 0
    assert killed.kills_mid_work is not None and killed.kills_mid_work >= 8  # in the work, not start-ups or after it
    assert killed.recorded_calls == killed.journaled
    assert killed.unrecorded is not None and 0 <= killed.unrecorded <= killed.in_flight_at_kills
