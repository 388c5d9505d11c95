"""ragdive's pytest plugin (entry point ``pytest11``: active wherever ragdive is installed).

- the ``ragdive`` fixture (session scope): ``ragdive.run(config, overrides)`` runs an experiment through the API
  once per test session and configuration (the same call again returns the same result); a run that an earlier
  session left unfinished (interrupted, budget spent) is resumed, and the model cache answers what was asked
  before. ``ragdive.assert_gate(result, correctness=">= 0.9")`` fails the test with the metric, its value, CI and
  worst conversations.
- the ``ragdive`` marker: ``@pytest.mark.ragdive`` marks a test as an evaluation (deselect: ``-m "not ragdive"``);
  tests that use the fixture carry it automatically.
- ``--ragdive-config FILE`` (ini ``ragdive_config``): the experiment ``ragdive.run()`` runs without arguments;
  ``--ragdive-output DIR`` (ini ``ragdive_output``): where the runs go (default ``.ragdive/pytest``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

MARKER = "ragdive: an evaluation with ragdive (slow, calls models); deselect with -m 'not ragdive'"
UNFINISHED = ("interrupted", "budget_exceeded", "running", "created")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragdive", "ragdive evaluations")
    group.addoption("--ragdive-config", default=None, help="Experiment YAML that ragdive.run() runs by default.")
    group.addoption("--ragdive-output", default=None, help="Folder for the runs (default: .ragdive/pytest).")
    parser.addini("ragdive_config", "Experiment YAML that ragdive.run() runs by default.", default="")
    parser.addini("ragdive_output", "Folder for the runs of the ragdive fixture.", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "ragdive" in getattr(item, "fixturenames", ()) and item.get_closest_marker("ragdive") is None:
            item.add_marker(pytest.mark.ragdive)


class RagdiveSession:
    """What the ``ragdive`` fixture gives a test."""

    def __init__(self, root: Path, output: Path, default_config: str | None) -> None:
        self.root = root
        self.output = output
        self.default_config = default_config
        self._results: dict[str, Any] = {}

    def run(self, config: Any = None, overrides: Mapping[str, Any] | None = None) -> Any:
        """``ragdive.run`` once per session for this config and overrides (dotted config paths, as the API's: a
        ragdive.RunResult)."""
        from ragdive import api

        if config is None:
            if not self.default_config:
                raise pytest.UsageError("ragdive.run() needs a config, --ragdive-config or ini ragdive_config")
            config = self.default_config
        if isinstance(config, str | Path) and not Path(config).is_absolute():
            config = self.root / config
        experiment = api.load_experiment(config, overrides)
        key = hashlib.sha256(json.dumps(experiment.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[:16]
        if key in self._results:
            return self._results[key]
        folder = self.output / key
        resume = _unfinished(folder)
        if resume is not None:
            result = api.run(experiment, resume=resume)
        else:
            result = api.run(experiment, output=folder)
        self._results[key] = result
        return result

    def assert_gate(self, result: Any, **rules: Any) -> Any:
        """``ragdive.assert_gate``: AssertionError naming each failed metric, its value, CI, worst conversations."""
        from ragdive import api

        __tracebackhide__ = True
        return api.assert_gate(result, **rules)

    def gate(self, result: Any, rules: Any = None, **options: Any) -> Any:
        from ragdive import api

        return api.gate(getattr(result, "run_dir", result), rules, **options)


def _unfinished(folder: Path) -> Path | None:
    """The newest run in ``folder`` that did not finish (a session stopped mid-run), to resume."""
    if not folder.is_dir():
        return None
    for run_dir in sorted((p for p in folder.iterdir() if (p / "manifest.json").is_file()), reverse=True):
        try:
            status = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8")).get("status")
        except (OSError, ValueError):
            continue
        return run_dir if status in UNFINISHED else None
    return None


@pytest.fixture(scope="session")
def ragdive(request: pytest.FixtureRequest) -> RagdiveSession:
    config = request.config
    root = Path(str(config.rootpath))
    default = config.getoption("--ragdive-config") or config.getini("ragdive_config") or None
    output = config.getoption("--ragdive-output") or config.getini("ragdive_output") or ".ragdive/pytest"
    out = Path(output)
    return RagdiveSession(root, out if out.is_absolute() else root / out, default)
