"""The README's "Use it in CI" script, run as written with bash on a scripted experiment: it passes on a good
target, fails (exit 6, JUnit failures, a Markdown summary naming the metric) on a planted regression, and fails
against a baseline when a drop is outside noise. `gate` with no threshold anywhere exits 2."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

TARGET = '''
import os

DOC = open(os.path.join(os.path.dirname(__file__), "corpus", "harbour.md"), encoding="utf-8").read().strip()


def answer(message: str) -> dict:
    """Answers with its only document; RAG_REGRESSION plants a regression: only the first sentence."""
    text = DOC.split(". ")[0] + "." if os.environ.get("RAG_REGRESSION") else DOC
    return {"answer": text, "contexts": [{"text": text, "source": "harbour"}]}
'''

DOC = (
    "The harbour museum opened in 1954. It keeps the logbooks of forty ships. Entry is free on Sundays. "
    "The lighthouse beside it was rebuilt in 1901. Guided tours start at ten."
)


def readme_script() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- readme-ci-start -->\n```bash\n(.*?)```\n<!-- readme-ci-end -->", text, re.S)
    assert block, "the README's CI script is marked by readme-ci-start / readme-ci-end"
    return block.group(1)


def experiment(workdir: Path, gate: str = 'gate: {correctness: ">= 0.8"}') -> None:
    (workdir / "corpus").mkdir()
    (workdir / "corpus" / "harbour.md").write_text(DOC + "\n", encoding="utf-8")
    (workdir / "my_rag.py").write_text(TARGET, encoding="utf-8")
    offline = "ragdive.testing.offline"
    roles = "\n".join(
        f"  {r}: {{model: scripted/{r}, options: {{responder: '{offline}:{r}'}}}}"
        for r in ("user", "validator", "judge")
    )
    (workdir / "experiment.yaml").write_text(
        "name: ci-example\nseed: 3\n"
        "cache: {dir: cache}\n"
        f"models:\n{roles}\n"
        "corpus: {path: corpus}\n"
        "simulation: {conversations: 4, max_turns: 3, concurrency: 2}\n"
        "target: {type: python, callable: 'my_rag:answer'}\n"
        f"evaluation:\n  metrics: [correctness, faithfulness]\n  {gate}\n",
        encoding="utf-8",
    )


def run_script(workdir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (workdir / "ci.sh").write_text(readme_script(), encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if k not in ("RAG_REGRESSION", "RAGDIVE_BASELINE")}
    environ.update(PATH=f"{BIN}{os.pathsep}{environ.get('PATH', '')}", PYTHONPATH=str(workdir), **env)
    return subprocess.run(
        ["bash", "ci.sh"], cwd=workdir, env=environ, capture_output=True, text=True, timeout=300, check=False
    )


def junit_failures(workdir: Path) -> list[str]:
    root = ET.parse(workdir / "reports" / "ragdive-junit.xml").getroot()
    return [c.get("name", "") for c in root.iter("testcase") if c.find("failure") is not None]


@pytest.mark.skipif(not (BIN / "ragdive").exists(), reason="the ragdive command is not installed beside python")
def test_readme_ci_script_passes_then_fails_on_a_planted_regression(tmp_path: Path) -> None:
    experiment(tmp_path)
    good = run_script(tmp_path)
    assert good.returncode == 0, good.stderr + good.stdout
    assert junit_failures(tmp_path) == []
    assert "✅ passed" in (tmp_path / "reports" / "ragdive-summary.md").read_text(encoding="utf-8")
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 1
    baseline = str(runs[0])

    summary_file = tmp_path / "step-summary.md"
    bad = run_script(tmp_path, RAG_REGRESSION="1", GITHUB_STEP_SUMMARY=str(summary_file))
    assert bad.returncode == 6, bad.stderr + bad.stdout
    assert junit_failures(tmp_path) == ["correctness >= 0.8"]
    summary = summary_file.read_text(encoding="utf-8")  # appended to the step summary although the gate failed
    assert "❌ failed: 1 of 1 checks" in summary and "correctness" in summary and "Worst conversations" in summary
    assert "gate failed" in bad.stdout

    # the same regression against the good run as baseline: the drop is beyond noise, a second failing check
    again = run_script(tmp_path, RAG_REGRESSION="1", RAGDIVE_BASELINE=baseline)
    assert again.returncode == 6, again.stderr + again.stdout
    assert sorted(junit_failures(tmp_path)) == sorted(["correctness >= 0.8", "correctness drop <= 0.05 vs ci-example"])


def test_gate_without_thresholds_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.cli.main import main

    experiment(tmp_path, gate="concurrency: 1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", "experiment.yaml", "--output", "runs"]) == 0
    run_dir = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["gate", run_dir]) == 2
    assert "no gate: give thresholds" in capsys.readouterr().err
    assert main(["gate", run_dir, "--min", "correctness=0.5"]) == 0
    assert "gate passed" in capsys.readouterr().out
    assert main(["gate", run_dir, "--min", "correctness=1.01", "--json"]) == 6
    assert '"passed": false' in capsys.readouterr().out
