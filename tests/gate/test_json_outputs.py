"""`--json` on run, evaluate, compare, runs list, runs show, gate and sweep: each document validates against the schema
`ragdive config output-schema COMMAND` publishes, nothing else is on stdout, and its numbers are the terminal's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ragdive.cli.main import main
from tests.pipeline.helpers import write_experiment


def schema(command: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["config", "output-schema", command]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def document(args: list[str], command: str, capsys: pytest.CaptureFixture[str], code: int = 0) -> dict[str, Any]:
    assert main(args) == code
    text = capsys.readouterr().out
    data = json.loads(text)  # the whole of stdout is one JSON document
    jsonschema.validate(data, schema(command, capsys))
    assert data["version"] == 1
    return data  # type: ignore[no-any-return]


def test_every_json_output_validates_and_matches_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_experiment(tmp_path)
    gated = "evaluation: {concurrency: 1, gate: {correctness: '>= 0.2'}}"
    config.write_text(config.read_text().replace("evaluation: {concurrency: 1}", gated))
    run = document(["run", str(config), "--json", "--gate"], "run", capsys)
    assert run["schema_name"] == "ragdive.run" and run["status"] == "finished"
    assert run["gate"]["passed"] is True and run["gate"]["checks"][0]["metric"] == "correctness"
    run_dir = run["run_dir"]

    # the terminal's table, for the same run: the same means and counts
    evaluated = document(["evaluate", run_dir, "--config", str(config), "--json"], "evaluate", capsys)
    assert evaluated["metrics"] == run["metrics"]  # nothing left to score: the same summary
    shown = document(["runs", "show", run_dir, "--json"], "runs-show", capsys)
    assert main(["run", str(config)]) == 0  # served from the cache: the same numbers, printed as a table
    table = capsys.readouterr().out
    for metric in shown["metrics"]:
        if metric["mean"] is not None:
            assert f"{metric['mean']:.3f} (n={metric['n_scored']})" in table, metric
    assert [m["mean"] for m in shown["metrics"]] == [m["mean"] for m in run["metrics"]]

    listed = document(["runs", "list", str(Path(run_dir).parent), "--json"], "runs-list", capsys)
    assert run["run_id"] in {r["run_id"] for r in listed["runs"]}

    gate = document(["gate", run_dir, "--min", "correctness=1.01", "--json"], "gate", capsys, code=6)
    assert gate["passed"] is False and gate["checks"][0]["value"] == pytest.approx(
        next(m["mean"] for m in run["metrics"] if m["metric"] == "correctness")
    )

    other = sorted(p for p in Path(run_dir).parent.iterdir() if str(p) != run_dir)[0]
    compared = document(["compare", run_dir, str(other), "--json", "--fail-on-regression"], "compare", capsys)
    (comparison,) = compared["comparisons"]
    assert compared["regressions"] == [] and {m["metric"] for m in comparison["metrics"]} >= {"correctness"}
    assert all(m["change"] == pytest.approx(0) for m in comparison["metrics"] if m["change"] is not None)


def test_run_gate_without_a_configured_gate_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_experiment(tmp_path)
    assert main(["run", str(config), "--gate"]) == 2
    assert "sets no evaluation.gate" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # found before anything ran


def test_output_schema_of_an_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "output-schema", "demo"]) == 2
    assert "no --json output for 'demo'" in capsys.readouterr().err


def test_sweep_json_validates_and_holds_the_printed_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.pipeline.sweep_helpers import write_sweep

    path = write_sweep(tmp_path, repeats=2, axes={"target.history": ["full", "none"]})
    out = tmp_path / "sweep"
    data = document(["sweep", str(path), "-o", str(out), "--json"], "sweep", capsys)
    assert data["schema_name"] == "ragdive.sweep" and data["status"] == "finished" and data["sweep_dir"] == str(out)
    assert [c["axes"] for c in data["cells"]] == [{"target.history": "full"}, {"target.history": "none"}]
    runs = [r for c in data["cells"] for r in c["runs"]]
    assert len(runs) == 6 and {r["status"] for r in runs} == {"finished"}  # 2 cells x (2 repeats + static)
    assert data["tables"] == json.loads((out / "tables.json").read_text())
    # the terminal's tables, from the same sweep (resumed: nothing left to run), show the same figures
    assert main(["sweep", str(path), "-o", str(out), "--resume"]) == 0
    printed = capsys.readouterr().out
    assert data["tables"] and all(f"{v:.3f}"[1:] in printed or f"{v:.3f}" in printed for v in _numbers(data["tables"]))


def _numbers(tables: Any) -> list[float]:
    """The means of the tables' cells (floats in [0, 1] under a "mean" key)."""
    found: list[float] = []
    if isinstance(tables, dict):
        for key, value in tables.items():
            if key == "mean" and isinstance(value, float):
                found.append(value)
            else:
                found += _numbers(value)
    elif isinstance(tables, list):
        for item in tables:
            found += _numbers(item)
    return found


def test_compare_computes_each_comparison_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table, the JSON and --fail-on-regression read one computation (its permutation tests cost time)."""
    import ragdive.cli.compare as compare_module

    config = write_experiment(tmp_path)
    assert main(["run", str(config)]) == 0 and main(["run", str(config), "--no-cache"]) == 0
    capsys.readouterr()
    first, second = sorted(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    calls: list[int] = []
    real = compare_module.compare_configurations

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(compare_module, "compare_configurations", counted)
    for extra in (["--fail-on-regression"], ["--json", "--fail-on-regression"]):
        calls.clear()
        assert main(["compare", str(first), str(second), *extra]) == 0
        assert len(calls) == 1, extra
    assert "no regression" in capsys.readouterr().out
