"""Analyses read records and the run store only: importing them must not load the model layer (or anything that
talks to an LLM), so a report built on them works where no model can be built."""

from __future__ import annotations

import subprocess
import sys

BLOCKED = ("ragdive.models", "ragdive.evaluation", "ragdive.simulation", "ragdive.targets", "openai", "litellm")

SCRIPT = f"""
import importlib.abc, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in {BLOCKED!r}):
            raise ImportError(f"blocked in this test: {{name}}")
        return None

sys.meta_path.insert(0, Block())
import ragdive.analysis, ragdive.records, ragdive.store
from ragdive.analysis import RunScores, summarize_run
from ragdive.store import latest_rejections, latest_scores
print("ok")
"""


def test_analysis_store_and_records_import_without_the_model_layer() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_block_really_blocks() -> None:
    """The hook above would hide a broken test if it never fired: importing the model layer under it fails."""
    script = SCRIPT.replace("import ragdive.analysis,", "import ragdive.models, ragdive.analysis,")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "blocked in this test: ragdive.models" in done.stderr
