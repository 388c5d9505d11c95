"""Each measuring benchmark still runs at a tiny size: they live outside the package, so a change of the API
under them broke four in one round (throughput.py and sweep.py on RunOptions, prompt_prefix.py on the stub that
stopped keeping requests, report_size.py on lazily made report views; later reference_rag.py on a method the index
no longer has) and nothing noticed. The figures are not checked here (benchmarks print ratios; nothing times here),
only that each ends with exit 0 and says something."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RUNS = {
    "throughput": ["--runs", "0.01:3x2", "--no-sdk", "--no-deepeval", "--no-cache-figures"],
    "sweep": ["--latencies-ms", "5", "--cells", "1", "--repeats", "1", "--conversations", "2", "--turns", "2"],
    "scale": ["--sizes", "3", "--turns", "2", "--latency", "0.01"],
    "tail": ["--runs", "0.01:3x2"],
    "cached_rerun": ["--size", "3x2", "--rounds", "1"],
    "start_up": ["--rounds", "1"],
    "prompt_prefix": ["--conversations", "2", "--turns", "2"],
    "conversation_tokens": ["--conversations", "2", "--turns", "2"],
    "reference_rag": ["--dense-docs", "1", "--queries", "5"],  # SKIP (exit 0) without the SQuAD corpus beside
    "report_size": ["--conversations", "3", "--turns", "2", "--loads", "1", "--no-full-bundle"],
    "loop_hops": ["--runs", "0.01:3x2", "--kinds", "3"],
    "record_lines": ["--before", str(ROOT / "src"), "--conversations", "3", "--turns", "2", "--rounds", "1"],
    "window_cpu": ["--before", str(ROOT / "src"), "--jobs", "200", "--rounds", "1"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_benchmark_runs_at_a_tiny_size(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *RUNS[name]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "it printed nothing"
