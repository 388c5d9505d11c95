"""The Python API: the README's example runs as written, inside a running event loop (a notebook) and awaited;
overrides name config paths; evaluate and compare work on run directories."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

import ragdive
from ragdive.store import list_runs

ROOT = Path(__file__).resolve().parents[1]


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"<!-- readme-python-api-start -->\n```python\n(.*?)```\n<!-- readme-python-api-end -->", text, re.S
    )
    assert found, "the README's Python API example (between its marker comments) is missing"
    return found.group(1)


def exec_as_module(code: str, name: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Runs ``code`` as an importable module, as a script or a notebook is (`f"{__name__}:my_rag"` resolves)."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(code, f"README.md:{name}", "exec"), module.__dict__)
    return module.__dict__


@pytest.fixture(autouse=True)
def _temporary_files_under_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README example makes its own temporary folder: under the test's, so nothing is left behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


async def test_the_readme_example_runs_inside_a_running_event_loop(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.get_running_loop()  # as in a notebook cell: the sync API is called with a loop running
    namespace = exec_as_module(readme_example(), "readme_example", monkeypatch)
    result = namespace["result"]
    assert isinstance(result, ragdive.RunResult)
    assert result.status == "finished" and result.error is None
    assert result.run_dir.is_dir() and (result.run_dir / "evaluations.jsonl").is_file()
    assert result.totals.conversations == 2 and result.totals.turns == 6  # the simulation.max_turns=3 override
    correctness = result.metrics["correctness"]
    assert correctness.mean == 1.0 and correctness.n_scored == 6 and correctness.n_unscored == 0
    assert f"finished {result.run_dir}" in capsys.readouterr().out

    # awaited, with the same config: a second run next to the first, scored
    again = await ragdive.arun(namespace["config"], conversations=1, max_turns=2)
    assert again.status == "finished" and again.run_dir != result.run_dir
    assert again.totals.turns == 2 and again.metrics["correctness"].n_scored == 2
    assert again.metrics["forgetfulness"].n_scored == 1  # whole-conversation metrics too
    runs = list_runs(Path(namespace["config"]["output_dir"]))
    assert sorted(r.read_manifest().status for r in runs) == ["finished", "finished"]  # no orphan `created` run


def test_a_config_mistake_from_the_api_is_one_config_error_and_leaves_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    namespace = exec_as_module(readme_example().split("result = ragdive.run")[0], "readme_config", monkeypatch)
    config = {**namespace["config"], "output_dir": str(tmp_path / "runs")}
    with pytest.raises(ragdive.ConfigError, match="simulation.max_turnz: unknown field"):
        ragdive.run(config, {"simulation.max_turnz": 3})
    with pytest.raises(ragdive.ConfigError, match="no judge model"):
        ragdive.run({**config, "models": {k: v for k, v in config["models"].items() if k != "judge"}})
    assert not (tmp_path / "runs").exists() or list_runs(tmp_path / "runs") == []


def test_simulate_then_evaluate_then_compare_from_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = exec_as_module(readme_example().split("result = ragdive.run")[0], "readme_parts", monkeypatch)
    config = {**namespace["config"], "output_dir": str(tmp_path / "runs")}
    simulated = ragdive.simulate(config, conversations=2, max_turns=1)
    assert simulated.status == "finished" and simulated.metrics == {}
    scored = ragdive.evaluate(simulated.run_dir, metrics=["correctness", "faithfulness"])
    assert set(scored.metrics) == {"correctness", "faithfulness"} and scored.metrics["correctness"].n_scored == 2
    other = ragdive.run(config, conversations=2, max_turns=1)
    (comparison,) = ragdive.compare(simulated.run_dir, other.run_dir, metrics=["correctness"])
    (row,) = comparison.metrics
    assert row.metric == "correctness" and row.baseline_mean == row.mean == 1.0


def test_import_ragdive_stays_cheap() -> None:
    heavy = "('rich', 'scipy', 'numpy', 'ragdive.models')"
    code = f"import sys, ragdive; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_an_api_name_loads_its_own_module_not_every_use_case() -> None:
    """`ragdive run` imports arun and Observer: none of the other use cases' modules (analyses, annotations,
    exports, sweeps and what they import cost its start-up ~0.08 s); the sync forms still pickle as api.NAME."""
    others = ("ragdive.api.analyses", "ragdive.api.annotations", "ragdive.api.exports", "ragdive.api.sweeps")
    code = (
        "import pickle, sys; from ragdive.api import Observer, arun; from ragdive import api; "
        f"print(sorted(m for m in {others!r} if m in sys.modules), pickle.loads(pickle.dumps(api.run)) is api.run)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[] True"


async def test_ctrl_c_while_the_sync_api_waits_in_a_running_loop_marks_the_run_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.pipeline.helpers import write_experiment

    monkeypatch.setenv("PIPETEST_SLOW_JUDGE", "1")  # each judge call waits 0.15 s: the run is stopped mid-scoring
    config = write_experiment(tmp_path)

    def ctrl_c_once_scoring() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list((tmp_path / "runs").glob("*/evaluations.jsonl")):
            time.sleep(0.02)
        signal.raise_signal(signal.SIGINT)  # as Jupyter's interrupt does: KeyboardInterrupt in the main thread

    # Python's own Ctrl-C handler, as in a notebook kernel (pytest-asyncio's loop runner installs one of its own)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupter = threading.Thread(target=ctrl_c_once_scoring)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ragdive.run(config, no_cache=True)
    finally:
        interrupter.join()
        signal.signal(signal.SIGINT, previous)
    (store,) = list_runs(tmp_path / "runs")
    assert store.read_manifest().status == "interrupted"  # not left "running" by a thread that went on
    assert 1 <= len(store.scores().records) < 20
    assert not [t for t in threading.enumerate() if t.name == "ragdive-api"]  # the run's thread has ended


def test_overrides_name_config_paths_and_the_command_line_options(tmp_path: Path) -> None:
    from ragdive.api import load_experiment
    from tests.pipeline.helpers import write_experiment

    config = load_experiment(
        write_experiment(tmp_path),
        {"seed": 11, "simulation.concurrency": 3, "evaluation.metrics": ["correctness"]},
        models="judge=scripted/other",
        conversations=4,
    )
    assert config.seed == 11 and config.simulation.concurrency == 3 and config.simulation.conversations == 4
    assert config.evaluation.metrics == ["correctness"]
    judge = config.models.for_role("judge")
    assert judge is not None and judge.model == "scripted/other"
    assert config.simulation.max_turns == 2  # untouched settings keep the file's values


@pytest.mark.parametrize("name", ["run", "simulate", "evaluate", "static", "replay", "sweep"])
def test_each_sync_form_has_its_coroutines_signature_and_docstring(name: str) -> None:
    """The sync forms are folded from their coroutines (sync_of): a keyword added to ``arun`` is ``run``'s too, and
    help() in a notebook shows every parameter and the coroutine's documentation under the public name."""
    import inspect

    from ragdive import api

    sync, coroutine = getattr(api, name), getattr(api, f"a{name}")
    assert not inspect.iscoroutinefunction(sync)
    assert inspect.signature(sync) == inspect.signature(coroutine)
    assert (sync.__module__, sync.__name__) == ("ragdive.api", name)
    assert sync.__doc__.startswith(f"`a{name}`, waited for")
    assert inspect.cleandoc(coroutine.__doc__) in sync.__doc__


def test_the_package_says_it_is_typed() -> None:
    """Without py.typed a user's type checker sees the whole API as Any."""
    assert (Path(ragdive.__file__).parent / "py.typed").is_file()


def test_sync_of_wants_a_coroutine_named_like_its_sync_form() -> None:
    from ragdive.sync_edge import sync_of

    async def run_it() -> None:
        return None

    with pytest.raises(ValueError, match="starts with 'a'"):
        sync_of(run_it)


def test_every_name_ragdive_exports_resolves_to_the_apis_own() -> None:
    """``import ragdive`` stays cheap: the API's names in ragdive.__all__ are imported on first use, once."""
    from ragdive import api

    for name in ragdive.__all__:
        value = getattr(ragdive, name)
        if name in api.__all__:
            assert value is getattr(api, name), name
    assert {"run", "arun", "sweep", "RunResult", "Observer"} <= set(ragdive.__all__) & set(api.__all__)


def test_no_name_ragdive_exports_is_also_one_of_its_subpackages() -> None:
    """Importing a subpackage sets the package's attribute of that name: an exported function of the same name
    (ragdive.gate, once) would turn into the module after the first import of ragdive.gate."""
    root = Path(ragdive.__file__).parent
    modules = {p.stem for p in root.glob("*.py")} | {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    assert not set(ragdive.__all__) & modules
