"""Results in a notebook: a real Jupyter kernel (nbclient + ipykernel) runs a scripted experiment through the Python
API, displays the result (its HTML table) and builds the DataFrames."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from ragdive.api import SweepResult
from tests.evaluation.test_custom_metrics import CITES, write_experiment

ROOT = Path(__file__).resolve().parents[1]


def kernel_in(folder: Path) -> str:
    """A kernel spec on this interpreter (the test's ragdive), so the notebook imports what is being tested."""
    spec = folder / "kernels" / "ragdive-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "ragdive test", "language": "python"}))
    return "ragdive-test"


def test_a_notebook_runs_an_experiment_displays_it_and_builds_data_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_experiment(tmp_path, "notebook", [CITES])
    cells = [
        f"import ragdive\nresult = ragdive.run({str(config)!r}, no_cache=True)\nresult",
        "turns = result.to_pandas()\nconversations = result.to_pandas('conversations')\n"
        "scores = result.to_pandas('scores')\n"
        "print(len(turns), len(conversations), len(scores))\n"
        "print(sorted(set(scores.metric)))\n"
        "print(list(scores.columns))\n"
        "print('score_cites_source' in turns.columns, 'score_forgetfulness' in conversations.columns)",
        f"again = ragdive.run({str(config)!r}, {{'seed': 1}}, no_cache=True)\n"
        "comparison = ragdive.compare(result.run_dir, again.run_dir)[0]\ncomparison",
        "frame = comparison.to_pandas()\nprint(list(frame.metric)[:3], frame.shape[1])",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    client = NotebookClient(
        notebook, kernel_name=kernel_in(tmp_path), timeout=300, resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()
    shown = notebook.cells[0].outputs[-1]["data"]
    assert shown["text/plain"].startswith("RunResult ") and "finished" in shown["text/plain"]
    html = shown["text/html"]
    assert "<table>" in html and "<th>95% CI</th>" in html and "<td>cites_source</td>" in html
    printed = notebook.cells[1].outputs[0]["text"].splitlines()
    turns, conversations, scores = (int(n) for n in printed[0].split())
    assert turns == 4 and conversations == 2 and scores > turns
    assert "cites_source" in printed[1] and "correctness" in printed[1]
    assert printed[2].startswith("['run_id', 'conversation_id', 'turn', 'metric', 'value', 'unscored_reason'")
    assert printed[3] == "True True"
    compared = notebook.cells[2].outputs[-1]["data"]
    assert compared["text/plain"].startswith("Comparison: ") and "<th>paired</th>" in compared["text/html"]
    assert notebook.cells[3].outputs[0]["text"].strip().endswith(" 22")


def test_a_sweep_result_shows_its_baseline_table_and_its_tables_as_frames(tmp_path: Path) -> None:
    rows = [{"metric": "correctness", "n": 2, "mean": 0.5, "std": 0.1, "min": 0.4, "max": 0.6}]
    rows[0] |= {"ci_low": 0.3, "ci_high": None}
    tables = {"table2": {"cell": "c0", "repeats": 2, "rows": rows}, "table4": {"rows": []}}
    sweep = SweepResult(tmp_path / "s1", "finished", {"r1": "finished", "r2": "failed"}, tables)
    text = repr(sweep)
    assert "SweepResult s1: finished; runs: 1 failed, 1 finished" in text and "correctness  2" in text
    assert "<td>0.500</td>" in sweep._repr_html_()
    assert list(sweep.to_pandas("runs").status) == ["finished", "failed"]
    assert list(sweep.to_pandas("table2").columns)[:3] == ["metric", "n", "mean"]
