"""What the end of `ragdive run` loads: only what it uses. Each of these imports once cost every run's tail (scipy
for the summary's bootstrap ~1 s and for themes ~0.2 s, the gate package ~0.05 s without --gate, the reference
RAG's server for the table's lower-is-better note ~0.05 s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.pipeline.helpers import write_experiment

ROOT = Path(__file__).resolve().parents[1]
UNUSED = ("scipy", "ragdive.gate", "ragdive.pipeline.serve", "ragdive.targets.reference")


def test_a_scored_run_imports_no_scipy_gate_or_reference_server(tmp_path: Path) -> None:
    config = write_experiment(tmp_path)
    probe = (
        "import sys; from ragdive.cli.main import main; code = main(['run', sys.argv[1]]); "
        f"print(code, sorted(m for m in sys.modules if m.startswith({UNUSED!r})))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(config)], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "0 []", done.stdout
    run_dir = Path(lines[-2])
    assert (run_dir / "report.html").is_file()  # the end still writes the report (its imports are its own)
