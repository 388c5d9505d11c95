"""The HTML report in a real browser (headless system Chromium): no console errors, the numbers of
`ragdive analyze --json`, hostile text shown as text with no dialog, a working persona filter, and a screenshot
for a person to look at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.cli.main import main
from tests.browser import chromium, missing
from tests.report_runs import HOSTILE, write_scripted_run

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")


def test_report_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = write_scripted_run(tmp_path / "runs", conversations=6, turns=3)
    assert main(["analyze", str(store.path), "--json"]) == 0
    analysis = json.loads(capsys.readouterr().out)["groups"]["all"]
    assert main(["report", str(store.path)]) == 0
    capsys.readouterr()

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        dialogs: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(store.report_path.as_uri(), wait_until="load")
        page.wait_for_selector("#conversation-list details")

        # the numbers shown are the analysis library's (as `ragdive analyze --json` prints them)
        flow = analysis["flow"]["per_turn"]
        for turn, qtype in [("1", "initial"), ("2", "follow-up"), ("2", "clarification"), ("3", "comparative")]:
            cell = page.locator(f'#flow-table td[data-turn="{turn}"][data-type="{qtype}"]').inner_text()
            share, count = flow[turn]["shares"][qtype], flow[turn]["counts"][qtype]
            assert cell == f"{share:.1%} ({count})"
        curve = analysis["curves"]["correctness"]
        mean = sum(p["mean"] * p["n"] for p in curve) / sum(p["n"] for p in curve)
        assert page.locator('#summary tr[data-metric="correctness"] td.mean').inner_text() == f"{mean:.3f}"
        assert page.locator("#flow .chart .main-svg").count() > 0  # plotly drew the chart, offline

        # the hostile answer is text; nothing ran
        first = page.locator('details[data-id="conv-0"]')
        first.locator("summary").click()
        answer = first.locator("dd.answer").first
        assert answer.inner_text() == HOSTILE
        assert page.locator("#conversation-list img, #conversation-list script").count() == 0

        # the persona filter shows only that persona's conversations
        page.select_option("#filter-persona", "precise")
        visible = page.locator("#conversation-list details:visible")
        assert sorted(visible.evaluate_all("els => els.map(e => e.dataset.persona)")) == ["precise"] * 3
        assert page.locator("#shown-count").inner_text() == "3 of 6 shown"
        page.select_option("#filter-persona", "")
        page.check("#filter-unscored")  # conversations 0 and 3 have an unscored turn
        ids = page.locator("#conversation-list details:visible").evaluate_all("els => els.map(e => e.dataset.id)")
        assert ids == ["conv-0", "conv-3"]
        page.uncheck("#filter-unscored")

        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
        page.wait_for_timeout(200)  # late errors (a chart's resize) still count
        assert problems == [] and dialogs == []
