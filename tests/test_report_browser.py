"""The HTML report in a real browser (headless system Chromium): no console errors, the numbers of
`ragdive analyze --json`, hostile text shown as text with no dialog, working filters (persona, question type,
score range per metric, unscored), and a screenshot for a person to look at."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ragdive.cli.main import main
from ragdive.store import RunStore
from tests.browser import chromium, missing
from tests.report_runs import HOSTILE, write_scripted_run
from tests.report_sweeps import HOSTILE_AXIS, REPORTED_RUN, tables, write_sweep_dir

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

# {chart: the types of the traces plotly.js drew}; a trace type missing from the bundle has no module
DRAWN = """() => Object.fromEntries(Array.from(document.querySelectorAll("[data-figure]")).map(div => [
  div.dataset.figure,
  (div._fullData || []).filter(t => t._module && t.visible !== false).map(t => t.type),
]))"""


def test_report_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # three seed documents, two conversations each: uniqueness has repeats to compare (by exact text, no embedder)
    store = write_scripted_run(tmp_path / "runs", conversations=6, turns=3, documents=3)
    assert main(["analyze", str(store.path), "--json", "--uniqueness", "exact"]) == 0
    analysis = json.loads(capsys.readouterr().out)["groups"]["all"]
    assert main(["report", str(store.path), "--uniqueness", "exact"]) == 0
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

        # the numbers shown are the analysis library's (as `ragdive analyze --json` prints them), every one of them
        check_analysis_numbers(page, analysis)
        curve = analysis["curves"]["correctness"]
        mean = sum(p["mean"] * p["n"] for p in curve) / sum(p["n"] for p in curve)
        assert page.locator('#summary tr[data-metric="correctness"] td.mean').inner_text() == f"{mean:.3f}"
        # every chart drawn offline, each trace by a module of the inlined (partial) plotly.js bundle
        drawn = page.evaluate(DRAWN)
        assert drawn == {"curves": ["scatter"], "flow": ["bar"] * 5, "lengths": ["bar"], "rejections": ["heatmap"]}

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
        assert shown_ids(page) == ["conv-0", "conv-3"]
        page.uncheck("#filter-unscored")
        check_type_and_score_filters(page, store)

        shot = screenshot_dir(tmp_path) / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        with capsys.disabled():  # shown even when pytest captures output: a person looks at it
            print(f"\nreport screenshot: {shot}")
        page.wait_for_timeout(200)  # late errors (a chart's resize) still count
        assert problems == [] and dialogs == []


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def cells(page: Any, row: str) -> list[str]:
    return page.locator(f"{row} td").evaluate_all("tds => tds.map(td => td.innerText.trim())")


def check_analysis_numbers(page: Any, a: dict[str, Any]) -> None:
    """Each flow, curve, uniqueness, rejection, acceptance and lapse number on the page is the JSON's."""
    flow = a["flow"]
    labelled = {**flow["per_turn"], "all": flow["overall"], "turns 2+": flow["after_first"]}
    assert len(labelled) == 5
    for label, shares in labelled.items():
        for qtype, count in shares["counts"].items():
            cell = page.locator(f'#flow-table td[data-turn="{label}"][data-type="{qtype}"]').inner_text()
            assert cell == f"{pct(shares['shares'][qtype])} ({count})"

    for metric, points in a["curves"].items():
        for p in points:
            ci = "-" if not p["ci"] else f"[{p['ci'][0]:.3f}, {p['ci'][1]:.3f}]"
            expected = [metric, str(p["turn"]), shown(p["mean"]), ci, str(p["n"]), str(p["n_unscored"])]
            assert cells(page, f'#curves tr[data-metric="{metric}"][data-turn="{p["turn"]}"]') == expected

    u = a["uniqueness"]
    assert u["seed_sets"] == 3 and u["method"] == "exact"
    table = f'table[data-method="{u["method"]}"]'
    for t in u["per_turn"].values():
        expected = [str(t["turn"]), str(t["questions"]), str(t["unique"]), str(t["distinct"]), pct(t["share"])]
        assert cells(page, f'{table} tr[data-turn="{t["turn"]}"]') == expected
    all_row = [str(u["questions"]), str(u["unique"]), str(u["distinct"]), pct(u["average_share"])]
    assert cells(page, f'{table} tr[data-turn="all"]') == ["all", *all_row]
    assert [t["share"] for t in u["per_turn"].values()] == [0.0, 0.0, 1.0]  # the fixture's repeats, as written

    r = a["rejections"]
    assert page.locator("#rejections h2").inner_text() == f"Validator rejections ({r['total']})"
    for category, n in r["by_category"].items():
        assert cells(page, f'#rejection-categories tr[data-category="{category}"]') == [category, str(n)]
    for label, x in [*r["acceptance_per_turn"].items(), ("all", r["acceptance"])]:
        expected = [
            label,
            str(x["turns"]),
            f"{pct(x['first_try_rate'])} ({x['first_try']})",
            f"{pct(x['overruled_share'])} ({x['overruled']})",
            str(x["drafts"]),
            f"{pct(x['deterministic_rate'])} ({x['deterministic_rejections']})",
        ]
        assert cells(page, f'#acceptance tr[data-turn="{label}"]') == expected

    for metric, lapse in a["lapses"].items():
        by_turn = " ".join(f"t{k}: {v}" for k, v in lapse["by_turn"].items()) or "-"
        by_distance = " ".join(f"{k}: {v}" for k, v in lapse["by_distance"].items()) or "-"
        counts = [str(lapse[k]) for k in ("scored", "unscored", "with_lapse", "lapses")]
        expected = [metric, *counts, by_turn, by_distance, str(lapse["unplaced"])]
        assert cells(page, f'#lapses-table tr[data-metric="{metric}"]') == expected


def screenshot_dir(tmp_path: Path) -> Path:
    """$RAGDIVE_SCREENSHOT_DIR when set (CI keeps it), else the test's own tmp dir; the path is printed."""
    where = Path(os.environ.get("RAGDIVE_SCREENSHOT_DIR") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def shown_ids(page: Any) -> list[str]:
    return page.locator("#conversation-list details:visible").evaluate_all("els => els.map(e => e.dataset.id)")


def check_type_and_score_filters(page: Any, store: RunStore) -> None:
    """Each filter against what the run's files say, one at a time and then together; each reset after."""
    conversations = store.current_conversations()
    scores = store.current_scores()
    everyone = [c.id for c in conversations]

    def having(test: Any) -> list[str]:
        return [c.id for c in conversations if test(c)]

    def valued(c: Any, metric: str | None, lo: float, hi: float) -> bool:
        return any(
            s.conversation_id == c.id
            and (metric is None or s.metric == metric)
            and s.value is not None
            and lo <= s.value <= hi
            for s in scores
        )

    page.select_option("#filter-type", "comparative")
    comparative = having(lambda c: any(t.question_type == "comparative" for t in c.turns))
    assert 0 < len(comparative) < len(everyone) and shown_ids(page) == comparative
    page.select_option("#filter-type", "")

    page.select_option("#filter-metric", "correctness")
    page.fill("#filter-min", "0.9")
    high = having(lambda c: valued(c, "correctness", 0.9, 1.0))
    assert 0 < len(high) < len(everyone) and shown_ids(page) == high
    page.fill("#filter-max", "0.9")  # both bounds count as inside
    exactly = having(lambda c: valued(c, "correctness", 0.9, 0.9))
    assert 0 < len(exactly) < len(high) and shown_ids(page) == exactly
    page.fill("#filter-min", "")
    page.fill("#filter-max", "")

    page.select_option("#filter-metric", "forgetfulness")
    page.fill("#filter-min", "1")
    lapsed = having(lambda c: valued(c, "forgetfulness", 1.0, 1.0))
    assert 0 < len(lapsed) < len(everyone) and shown_ids(page) == lapsed
    page.fill("#filter-min", "")
    page.check("#filter-unscored")  # no forgetfulness score is unscored; correctness ones are
    assert shown_ids(page) == [] and page.locator("#shown-count").inner_text() == f"0 of {len(everyone)} shown"
    page.uncheck("#filter-unscored")

    # together: a persona and a range on any metric
    page.select_option("#filter-metric", "")
    page.select_option("#filter-persona", "curious")
    page.fill("#filter-max", "0.7")
    both = having(lambda c: c.persona == "curious" and valued(c, None, float("-inf"), 0.7))
    assert 0 < len(both) and shown_ids(page) == both
    page.select_option("#filter-persona", "")
    page.fill("#filter-max", "")
    assert shown_ids(page) == everyone


def test_sweep_report_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every number, `*` and arrow of tables.json is on the page where it belongs; the run link opens its report."""
    sweep = write_sweep_dir(tmp_path)
    assert main(["report", str(sweep), "--uniqueness", "exact"]) == 0
    capsys.readouterr()
    t = tables()

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        dialogs: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto((sweep / "report.html").as_uri(), wait_until="load")

        def text(selector: str) -> str:
            return page.locator(selector).inner_text().strip()

        for r in t["table2"]["rows"]:
            row = f'#table2-table tr[data-metric="{r["metric"]}"]'
            for col in ("mean", "std", "min", "max"):
                assert text(f'{row} td[data-col="{col}"]') == shown(r[col])
            assert text(f'{row} td[data-col="n"]') == str(r["n"])
            ci = "-" if r["ci_low"] is None else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
            assert text(f'{row} td[data-col="ci"]') == ci

        for r in t["table4"]["rows"]:
            cell = f'#table4-table tr[data-cell="{r["cell"]}"] td[data-metric="{r["metric"]}"]'
            assert text(cell) == shown(r["mean"]) + ("*" if r["outside_band"] else "")
            assert text(f'#table4-table tr[data-band="min"] td[data-metric="{r["metric"]}"]') == shown(r["band_min"])
            assert text(f'#table4-table tr[data-band="max"] td[data-metric="{r["metric"]}"]') == shown(r["band_max"])
        stars = page.locator("#table4-table td.outside").count()
        assert stars == sum(r["outside_band"] for r in t["table4"]["rows"]) > 0

        arrows = 0
        for r in t["table5"]["rows"]:
            cell = f'#table5-table tr[data-cell="{r["cell"]}"] td[data-metric="{r["metric"]}"]'
            for col, arrow, better in (("dynamic", "arrow", "better"), ("static", "static_arrow", "static_better")):
                td = page.locator(f'{cell}[data-col="{col}"]')
                symbol = r.get(arrow) or ""
                assert td.inner_text().strip() == (shown(r[col]) + " " + symbol).strip()
                if symbol:
                    arrows += 1
                    expected = {True: "better", False: "worse", None: "unknown"}[r.get(better)]
                    assert td.locator("span.arrow").get_attribute("class") == f"arrow {expected}"
                else:
                    assert td.locator("span.arrow").count() == 0
        assert page.locator("#table5-table span.arrow").count() == arrows > 0

        assert HOSTILE_AXIS in text('#cells-table tr[data-cell="c3"]')  # shown as text
        shot = screenshot_dir(tmp_path) / "sweep-report.png"
        page.screenshot(path=str(shot), full_page=True)
        with capsys.disabled():
            print(f"\nsweep report screenshot: {shot}")

        page.click(f'#cells-table a.run:text("{REPORTED_RUN}")')
        page.wait_for_selector("#conversation-list details")  # the run's own report, opened from the link
        assert page.url.endswith(f"/runs/{REPORTED_RUN}/report.html")
        assert problems == [] and dialogs == []


def shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def test_a_context_shared_by_every_turn_is_stored_once_and_shown_in_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The packed report names a shared context by index and puts the turns in chunks read on demand: every
    turn of every chunk still shows the shared text and its own, in its own place."""
    from ragdive.report import html as report_html
    from ragdive.report import packing, report_data, text7

    monkeypatch.setattr(packing, "PER_CHUNK", 2)  # 5 conversations: 3 chunks, each unpacked when first opened
    store = write_scripted_run(tmp_path / "runs", conversations=5, turns=2)
    data = report_data(store)
    shared = "One passage <every> retriever returns & again"
    conversations = list(data["conversations"])
    for c in conversations:
        for t in c["turns"]:
            own = f"{c['id']} turn {t['number']} own passage"
            t["contexts"] = [{"text": shared, "source": "d", "score": 0.5}, {"text": own, "source": "e", "score": None}]
    packed = packing.pack(conversations)
    tokens = json.loads(gzip.decompress(text7.decode(packed.vocabulary)))
    assert packing.read_stream(packed.contexts, tokens).count(shared) == 1
    path = tmp_path / "report.html"
    path.write_text(report_html.render_report({**data, "conversations": conversations}), encoding="utf-8")

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_selector("#conversation-list details")
        assert page.locator("script.report-turns").count() == 3
        for c in reversed(conversations):  # the last chunk first: chunks are read in any order
            details = page.locator(f'details[data-id="{c["id"]}"]')
            details.locator("summary").click()
            page.wait_for_function(
                "n => document.querySelectorAll(`details[data-id='${n}'] .turn`).length === 2", arg=c["id"]
            )
            shown = details.locator(".turn").evaluate_all(
                "turns => turns.map(t => Array.from(t.querySelectorAll('.context')).map(x => x.textContent))"
            )
            assert shown == [
                [f"#1 d (0.500)\n{shared}", f"#2 e\n{c['id']} turn {t['number']} own passage"] for t in c["turns"]
            ]
        assert problems == []
