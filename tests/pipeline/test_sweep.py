"""`ragdive sweep`: cells from axes (product, zip, one-at-a-time), one readable error for an axis that does not
fit, the dry run's estimate, a sweep directory of runs with sweep.json and the tables, repeats that are new
samples while a re-run is served from the cache, and resume after kill -9 without a duplicate or missing item."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragdive.cli.main import main
from ragdive.config.sweep import SweepConfig
from ragdive.errors import ConfigError
from ragdive.pipeline.sweep_plan import plan_sweep
from ragdive.store import RunStore, SweepStore, score_key

from .sweep_helpers import HISTORIES, base_experiment, write_sweep

ROOT = Path(__file__).resolve().parents[2]


def _plan(tmp_path: Path, **sweep: Any) -> Any:
    return plan_sweep(SweepConfig.model_validate({"base": base_experiment(tmp_path), **sweep}))


def test_cells_product_zip_and_one_at_a_time(tmp_path: Path) -> None:
    product = _plan(tmp_path, axes={"target.history": ["full", "none"], "target.top_k": [3, 1]})
    assert [c.id for c in product.cells] == [
        "target.history=full, target.top_k=3",
        "target.history=full, target.top_k=1",
        "target.history=none, target.top_k=3",
        "target.history=none, target.top_k=1",
    ]
    assert product.baseline is product.cells[0]
    assert product.cells[3].config.target.top_k == 1 and product.cells[3].config.target.history == "none"
    assert product.cells[3].config.seed == 3  # every cell keeps the base's seed: the same seed documents

    zipped = _plan(
        tmp_path,
        axes={"target.chunk_size": [24, 48], "target.chunk_overlap": [4, 8]},
        zip=[["target.chunk_size", "target.chunk_overlap"]],
    )
    assert [c.axes for c in zipped.cells] == [
        {"target.chunk_size": 24, "target.chunk_overlap": 4},
        {"target.chunk_size": 48, "target.chunk_overlap": 8},
    ]

    # the paper's Table 4: baseline (full history, 10 contexts), then one change at a time
    ablation = _plan(
        tmp_path,
        axes={"target.history": ["none", "first", "full"], "target.top_k": [1, 3, 10]},
        design="one-at-a-time",
        baseline={"target.history": "full", "target.top_k": 10},
    )
    assert [c.id for c in ablation.cells] == [
        "target.history=full, target.top_k=10",
        "target.history=none, target.top_k=10",
        "target.history=first, target.top_k=10",
        "target.history=full, target.top_k=1",
        "target.history=full, target.top_k=3",
    ]
    assert ablation.baseline.id == "target.history=full, target.top_k=10"
    runs = _plan(tmp_path, axes={"target.top_k": [1, 2]}, repeats=2).runs
    assert [r.run_id for r in runs] == ["c00-r0", "c01-r0", "c00-r1", "c01-r1"]
    assert [r.config().repeat for r in runs] == [0, 0, 1, 1]


@pytest.mark.parametrize(
    ("sweep", "says"),
    [
        ({"axes": {"target.histroy": ["full"]}}, "target.histroy: unknown field"),
        ({"axes": {"target.history": ["sometimes"]}}, "cell target.history=sometimes does not fit"),
        ({"axes": {"seed.value": [1]}}, "seed is a value, not a section"),
        ({"axes": {"target.top_k": [1, 2]}, "baseline": {"target.top_k": 5}}, "baseline target.top_k=5"),
        ({"axes": {"repeat": [0, 1]}}, "use repeats: N"),
    ],
)
def test_an_axis_that_does_not_fit_the_experiment_is_one_error(
    tmp_path: Path, sweep: dict[str, Any], says: str
) -> None:
    with pytest.raises((ConfigError, ValueError), match=says):
        _plan(tmp_path, **sweep)


def test_zip_of_unequal_axes_and_unknown_fields_are_config_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["zip"] = [["target.history", "target.top_k"]]
    data["axes"]["target.top_k"] = [1, 2]
    data["repets"] = 2
    path.write_text(yaml.safe_dump(data))
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert "repets: unknown field" in err and "Traceback" not in err


def test_dry_run_prints_cells_and_call_estimate_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path)
    assert main(["sweep", str(path), "-o", str(tmp_path / "out"), "--dry-run"]) == 0
    shown = capsys.readouterr().out
    for history in HISTORIES:
        assert f"target.history={history}" in shown
    # 12 dynamic runs × 2 conversations × 2 turns = 48 user turns at fewest, × 3 attempts at most
    assert "48" in shown and "144" in shown and "c03-static" in shown
    assert not (tmp_path / "out").exists()


def _sweep(path: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["sweep", str(path), "-o", str(out), *extra]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().splitlines()[-1] == str(out)
    return captured.out


def _calls(store: RunStore) -> dict[str, int]:
    return {s.role: s.calls for s in store.read_manifest().totals.spend}


def test_a_sweep_writes_its_runs_index_and_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out = write_sweep(tmp_path), tmp_path / "out"
    shown = _sweep(path, out, capsys)
    assert "Table 2" in shown and "Table 4" in shown and "Table 5" in shown
    index = SweepStore.open(out).read()
    assert index.status == "finished" and index.baseline == "target.history=full"
    assert [c.cell for c in index.cells] == [f"target.history={h}" for h in HISTORIES]
    assert all(r.status == "finished" for c in index.cells for r in c.runs)
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(r.run_id for c in index.cells for r in c.runs)
    # the sweep ends with its report, which links every run's own report
    assert (out / "report.html").is_file()
    assert all((out / "runs" / r.run_id / "report.html").is_file() for c in index.cells for r in c.runs)
    for cell in index.cells:
        for entry in cell.runs:
            manifest = RunStore.open(out / "runs" / entry.run_id).read_manifest()
            assert manifest.kind == ("static" if entry.repeat == "static" else "dynamic")
            assert manifest.config["target"]["history"] == cell.axes["target.history"]
            if entry.repeat != "static":
                assert manifest.config["repeat"] == entry.repeat

    tables = json.loads((out / "tables.json").read_text())
    assert tables["baseline"] == "target.history=full" and tables["arrow_rule"] == "absolute:0.05"
    assert {m["name"]: m["direction"] for m in tables["metrics"]}["forgetfulness"] == "lower"
    assert tables["table2"]["repeats"] == 3 and all(r["n"] == 3 for r in tables["table2"]["rows"])
    assert [c["runs"] for c in tables["cells"]][0] == ["c00-r0", "c00-r1", "c00-r2"]
    assert len(tables["table4"]["rows"]) == 3 * len(tables["metrics"])  # every cell but the baseline
    static_rows = [r for r in tables["table5"]["rows"] if r["metric"] == "correctness"]
    assert len(static_rows) == 4 and all(r["static"] is not None for r in static_rows)
    assert all(r["static"] is None for r in tables["table5"]["rows"] if r["metric"] == "forgetfulness")
    for name in ("table2.csv", "table4.csv", "table5.csv"):
        assert (out / name).read_text().count("\n") > 1


def test_repeats_are_new_samples_and_a_rerun_is_served_from_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, repeats=2, static=False, axes={"target.history": ["full"]})
    _sweep(path, tmp_path / "first", capsys)
    first = [RunStore.open(tmp_path / "first" / "runs" / rid) for rid in ("c00-r0", "c00-r1")]
    for store in first:  # repeat 1 shares the cache with repeat 0, yet calls every role itself: not collapsed
        assert all(_calls(store).get(role, 0) > 0 for role in ("user", "validator", "target", "judge"))
    one, other = (sorted(s.conversations().records, key=lambda c: c.id) for s in first)  # lines in finish order
    assert [c.id for c in one] == [c.id for c in other] and all(
        a.seed != b.seed for a, b in zip(one, other, strict=True)
    )
    _sweep(path, tmp_path / "again", capsys)  # the same sweep again, a new directory, the same cache
    for rid in ("c00-r0", "c00-r1"):
        assert sum(_calls(RunStore.open(tmp_path / "again" / "runs" / rid)).values()) == 0


def test_a_second_sweep_into_the_same_directory_needs_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, repeats=1, static=False, axes={"target.history": ["full"]})
    _sweep(path, tmp_path / "out", capsys)
    assert main(["sweep", str(path), "-o", str(tmp_path / "out")]) == 2
    assert "--resume" in capsys.readouterr().err
    shown = _sweep(path, tmp_path / "out", capsys, "--resume")  # everything finished: nothing to redo
    assert "Table 2" in shown
    other = write_sweep(tmp_path, repeats=2, static=False, axes={"target.history": ["full"]})
    assert main(["sweep", str(other), "-o", str(tmp_path / "out"), "--resume"]) == 2
    assert "another sweep" in capsys.readouterr().err


def _expected_scores(store: RunStore) -> int:
    manifest = store.read_manifest()
    conversations = store.current_conversations()
    if manifest.kind == "static":
        return 4 * len(conversations)  # the four single-turn metrics, one turn each
    turns = sum(len(c.turns) for c in conversations)
    return 4 * turns + 2 * len(conversations)


@pytest.mark.slow  # ~45 s here: a dozen `ragdive sweep` processes of 16 runs each
def test_a_sweep_killed_again_and_again_resumes_to_the_same_result(tmp_path: Path) -> None:
    """kill -9 at random moments (a seeded draw, so a failure can be replayed), then --resume until it ends:
    every run, conversation and score is there exactly once, and the tables equal an uninterrupted sweep's."""
    path, out = write_sweep(tmp_path), tmp_path / "killed"
    command = [sys.executable, "-m", "ragdive", "sweep", str(path), "-o", str(out), "--no-cache"]
    # a judge slow enough that a whole (resumed) sweep outlasts the first kills' 1-4 s: at 0.01 s the faster
    # pipeline finished before the second kill
    env = {**os.environ, "SWEEPTEST_SLOW": "0.05", "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    draw = random.Random(11)
    kills = 0
    for attempt in range(12):
        resume = ["--resume"] if (out / "sweep.json").exists() else []
        proc = subprocess.Popen(command + resume, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if attempt < 4:
            try:
                proc.wait(timeout=draw.uniform(1.0, 4.0))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                continue
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        break
    assert kills >= 2  # the test killed it for real, more than once

    index = SweepStore.open(out).read()
    assert index.status == "finished"
    run_ids = [r.run_id for c in index.cells for r in c.runs]
    assert len(run_ids) == 16 and sorted(p.name for p in (out / "runs").iterdir()) == sorted(run_ids)
    for rid in run_ids:
        store = RunStore.open(out / "runs" / rid)
        assert store.read_manifest().status == "finished", rid
        conversations = store.conversations().records
        ids = [c.id for c in conversations]
        assert len(ids) == len(set(ids)) == 2, rid  # none twice, none missing
        scores = store.scores().records
        keys = [score_key(s) for s in scores]
        assert len(keys) == len(set(keys)) == _expected_scores(store), rid

    clean = tmp_path / "clean"
    done = subprocess.run(
        [sys.executable, "-m", "ragdive", "sweep", str(path), "-o", str(clean), "--no-cache"],
        cwd=tmp_path,
        env={**env, "SWEEPTEST_SLOW": ""},
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    killed_tables, clean_tables = (json.loads((d / "tables.json").read_text()) for d in (out, clean))
    for name in ("table2", "table4", "table5"):
        assert killed_tables[name] == clean_tables[name]


def test_the_python_api_runs_a_sweep_and_returns_its_tables(tmp_path: Path) -> None:
    import ragdive

    config = {"base": base_experiment(tmp_path), "axes": {"target.top_k": [2, 1]}, "repeats": 2}
    result = ragdive.sweep(config, output=tmp_path / "api")
    assert result.status == "finished" and result.sweep_dir == tmp_path / "api"
    assert sorted(result.runs) == ["c00-r0", "c00-r1", "c01-r0", "c01-r1"]
    assert set(result.runs.values()) == {"finished"}
    assert result.tables["baseline"] == "target.top_k=2" and "table5" not in result.tables
    again = ragdive.sweep(config, output=tmp_path / "api", resume=True)  # finished: nothing redone
    assert again.tables["table2"] == result.tables["table2"]


def test_cells_share_the_persisted_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four runs of two history cells (same corpus and chunking) build the reference RAG's index once and load it
    after; a second cell with another chunk size builds its own."""
    import ragdive
    from ragdive.targets.reference.retrievers.bm25 import BM25Retriever

    built: list[int] = []
    real_build = BM25Retriever.build.__func__  # type: ignore[attr-defined]

    def counting_build(cls: type[BM25Retriever], texts: list[str]) -> BM25Retriever:
        built.append(len(texts))
        return real_build(cls, texts)  # type: ignore[no-any-return]

    monkeypatch.setattr(BM25Retriever, "build", classmethod(counting_build))
    config = {"base": base_experiment(tmp_path), "axes": {"target.history": ["full", "none"]}, "repeats": 2}
    assert ragdive.sweep(config, output=tmp_path / "one").status == "finished"
    assert len(built) == 1 and len(list((tmp_path / "index").iterdir())) == 1

    other = {**config, "axes": {"target.chunk_size": [24, 40]}, "repeats": 1}
    assert ragdive.sweep(other, output=tmp_path / "two").status == "finished"
    assert len(built) == 2  # 24 was on disk already; 40 is a new index


def test_runs_of_a_sweep_share_the_cache_and_each_endpoints_limiter_but_not_their_ledgers(tmp_path: Path) -> None:
    from ragdive.config import ExperimentConfig, ModelSpec
    from ragdive.models import ModelContext
    from ragdive.models.cache import CompletionCache

    shared = ModelContext(cache=CompletionCache(tmp_path / "cache"))
    one, two = (shared.for_run(ExperimentConfig(repeat=r)) for r in (0, 1))
    spec = ModelSpec(model="openai/m", base_url="http://127.0.0.1:9/v1")
    assert one.limiter_for(spec) is two.limiter_for(spec) is shared.limiter_for(spec)
    assert one.limiter_for(ModelSpec(model="openai/m", base_url="http://127.0.0.1:8/v1")) is not shared.limiter_for(
        spec
    )
    assert one.cache is two.cache is shared.cache and (one.repeat_index, two.repeat_index) == (0, 1)
    assert one.ledger is not two.ledger  # each run's manifest records its own spend
    one.close()
    assert len(shared.cache) == 0  # closing a run's context left the shared cache open
    shared.close()


def test_sigterm_marks_the_sweep_and_its_running_run_interrupted(tmp_path: Path) -> None:
    path, out = write_sweep(tmp_path, repeats=1, static=False), tmp_path / "out"
    env = {**os.environ, "SWEEPTEST_SLOW": "0.05", "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragdive", "sweep", str(path), "-o", str(out), "--no-cache"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = out / "runs" / "c00-r0" / "evaluations.jsonl"
    for _ in range(600):  # until the first run is scoring (at most a minute)
        if first.is_file() and first.read_text().count("\n") >= 2:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "--resume" in err
    assert SweepStore.open(out).read().status == "interrupted"
    statuses = {p.name: RunStore.open(p).read_manifest().status for p in (out / "runs").iterdir()}
    assert "interrupted" in statuses.values() and "running" not in statuses.values(), statuses


def test_a_static_arm_with_a_multi_turn_metric_or_a_cell_without_judge_fails_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, repeats=1)
    data = yaml.safe_load(path.read_text())
    data["static"]["metrics"] = ["correctness", "forgetfulness"]
    path.write_text(yaml.safe_dump(data))
    assert main(["sweep", str(path), "-o", str(tmp_path / "out")]) == 2
    assert "forgetfulness" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing ran, no sweep directory to --resume

    del data["static"]
    data["base"]["models"].pop("judge")
    path.write_text(yaml.safe_dump(data))
    assert main(["sweep", str(path), "-o", str(tmp_path / "other")]) == 2
    assert "need a judge" in capsys.readouterr().err and not (tmp_path / "other").exists()


def test_a_static_arm_per_document_asks_about_the_cells_seed_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragdive.config import ExperimentConfig
    from ragdive.simulation import seed_documents

    path = write_sweep(tmp_path, repeats=1)
    sweep = yaml.safe_load(path.read_text())
    sweep["axes"] = {"target.history": ["full"]}
    sweep["static"] = {"dataset": "static.csv", "per_document": 1}
    path.write_text(yaml.safe_dump(sweep, sort_keys=False))
    out = tmp_path / "out"
    _sweep(path, out, capsys)
    static_run = RunStore.open(out / "runs" / "c00-static")
    asked = sorted(c.document_ids[0] for c in static_run.conversations().records)
    seeds = sorted(d.id for d in seed_documents(ExperimentConfig.model_validate(sweep["base"])))
    assert asked == seeds and len(seeds) == 2  # 2 conversations, 1 question about each seed document


def test_a_sweep_says_where_it_stands_after_each_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out = write_sweep(tmp_path, repeats=1, axes={"target.history": ["full", "none"]}), tmp_path / "out"
    assert main(["sweep", str(path), "-o", str(out)]) == 0
    standing = [line for line in capsys.readouterr().err.splitlines() if line.startswith("sweep: runs")]
    assert len(standing) == 4  # after each of 2 cells x (1 repeat + the static run)
    done = [int(line.split("runs ")[1].split("/")[0]) for line in standing]
    assert done == [1, 2, 3, 4] and all("/4 done" in line for line in standing)
    assert standing[-1].startswith("sweep: runs 4/4 done, 0 running, cells 2/2 done, cost ")
    assert standing[-1].endswith("none left") and "left" in standing[0]
    # scripted models have no price: the cost is unknown, never $0
    assert all("cost unknown" in line for line in standing)
