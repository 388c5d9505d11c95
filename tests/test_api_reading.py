"""The API's functions over finished runs: `analyze`, `report` and `export` from Python, as the command line uses
them (it only prints what they return)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from ragdive import api
from ragdive.errors import ConfigError

from .report_runs import write_scripted_run


def test_export_analyze_and_report_from_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = write_scripted_run(tmp_path, conversations=4, turns=3)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "kept")
    result = api.export(store.path, tmp_path / "out", ["csv", "deepeval"], tracking_uri="elsewhere")
    assert os.environ["MLFLOW_TRACKING_URI"] == "kept"  # an argument wins for this call only
    names = sorted(p.name for p in result.files)
    assert "turns.csv" in names and any(n.endswith(".json") for n in names) and result.sent == []
    with (tmp_path / "out" / "turns.csv").open(encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 4 * 3  # one row per turn

    analysed = api.analyze([store.path], uniqueness="exact")
    assert analysed.runs == [store.read_manifest().name or store.read_manifest().run_id]
    assert analysed.groups["all"].conversations == 4 and analysed.judge_spend == []
    assert analysed.document()["groups"]["all"]["conversations"] == 4

    report = api.report(store.path, tmp_path / "r.html", uniqueness="exact")
    assert report.path == tmp_path / "r.html" and "<html" in report.path.read_text(encoding="utf-8")[:500].lower()


def test_export_of_a_sweep_or_without_a_folder_is_a_config_error(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "sweep.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a sweep: export a sweep with --format mlflow"):
        api.export(sweep, tmp_path / "out", ["csv"])
    store = write_scripted_run(tmp_path / "run")
    with pytest.raises(ConfigError, match="writes files: name the folder"):
        api.export(store.path, None, ["csv"])


def test_annotate_export_without_a_corpus_says_so_and_a_summary_needs_ratings(tmp_path: Path) -> None:
    store = write_scripted_run(tmp_path, conversations=4, turns=3)
    with pytest.raises(ConfigError, match="corpus .* does not exist"):
        api.annotate_export(store.path, tmp_path / "sheet.csv", corpus=tmp_path / "nowhere")
    sheets = api.annotate_export(store.path, tmp_path / "sheet.csv", sample=6, raters=2)
    rating = [p for p in sheets.files if not p.name.endswith(".dialogues.csv")]  # beside each: its dialogues
    assert len(rating) == 2 and len(sheets.files) == 4 and all(p.is_file() for p in sheets.files)
    assert sheets.turns == 6 and sheets.notes and "excerpts show the evidence" in sheets.notes[0]
    with pytest.raises(ConfigError, match="has no ratings yet"):
        api.annotate_summary(store.path)
    blank = api.annotate_import(store.path, rating)
    assert (blank.ratings, blank.items) == (0, 0)  # nothing rated yet: nothing stored
