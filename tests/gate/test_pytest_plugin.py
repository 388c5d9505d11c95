"""The pytest plugin, as a user meets it: a sample test file with the `ragdive` fixture, `assert_gate` and the
marker, run by pytester in a fresh pytest with the plugin loaded from its entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate.test_ci_script import DOC, TARGET

EXPERIMENT = """
name: plugin-example
seed: 3
cache: {dir: cache}
models:
  user: {model: scripted/user, options: {responder: 'ragdive.testing.offline:user'}}
  validator: {model: scripted/validator, options: {responder: 'ragdive.testing.offline:validator'}}
  judge: {model: scripted/judge, options: {responder: 'ragdive.testing.offline:judge'}}
corpus: {path: corpus}
simulation: {conversations: 3, max_turns: 2, concurrency: 1}
target: {type: python, callable: 'my_rag:answer'}
evaluation: {metrics: [correctness]}
"""

SAMPLE = """
import pytest


def test_correct_enough(ragdive):
    result = ragdive.run()
    ragdive.assert_gate(result, correctness=">= 0.8")


def test_same_run_again(ragdive):
    assert ragdive.run() is ragdive.run()


def test_regressed(ragdive, monkeypatch):
    monkeypatch.setenv("RAG_REGRESSION", "1")  # the target answers with its first sentence only
    result = ragdive.run(overrides={"simulation.max_turns": 3})
    ragdive.assert_gate(result, correctness=">= 0.8", faithfulness=0.5)


@pytest.mark.ragdive
def test_marked_without_fixture():
    pass


def test_plain():
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    (pytester.path / "corpus").mkdir()
    (pytester.path / "corpus" / "harbour.md").write_text(DOC + "\n", encoding="utf-8")
    pytester.makepyfile(my_rag=TARGET)
    (pytester.path / "experiment.yaml").write_text(EXPERIMENT, encoding="utf-8")
    pytester.makeini("[pytest]\nragdive_config = experiment.yaml\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_rag=SAMPLE)
    monkeypatch.syspath_prepend(str(pytester.path))
    monkeypatch.delenv("RAG_REGRESSION", raising=False)
    return pytester


def test_sample_file_passes_fails_and_reports(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=4, failed=1)
    text = result.stdout.str()
    # the failure names the metric, its value and CI, the counts and the worst conversations
    assert "ragdive gate failed: 2 of 2 checks" in text
    assert "correctness >= 0.8 (plugin-example): 0.333 (95% CI" in text and "9 scored, 0 unscored" in text
    assert "worst conversations:" in text
    assert "faithfulness >= 0.5" in text and "the metric was not scored in this run" in text
    runs = list((project.path / ".ragdive" / "pytest").glob("*/*/manifest.json"))
    assert len(runs) == 2  # one run per configuration, not one per test


def test_marker_deselects_evaluations(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-m", "not ragdive")
    result.assert_outcomes(passed=1, deselected=4)
    assert not (project.path / ".ragdive").exists()  # nothing was run


def test_without_a_config_the_fixture_says_what_to_give(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_it(ragdive):\n    ragdive.run()\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(failed=1)
    assert "--ragdive-config or ini ragdive_config" in result.stdout.str()


def test_an_unfinished_run_of_an_earlier_session_is_resumed(tmp_path: Path) -> None:
    import json

    from ragdive.pytest_plugin import _unfinished

    def run(name: str, status: str) -> Path:
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps({"run_id": name, "status": status}))
        return tmp_path / name

    assert _unfinished(tmp_path / "none") is None
    run("20260101-000000-aaaaaa", "finished")
    newer = run("20260102-000000-bbbbbb", "interrupted")
    assert _unfinished(tmp_path) == newer
    run("20260103-000000-cccccc", "finished")
    assert _unfinished(tmp_path) is None  # the newest finished: a new run, never an old one reused
