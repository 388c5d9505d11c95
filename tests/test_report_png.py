"""The report's own "download plot as PNG" works under its Content-Security-Policy (plotly draws the PNG through a
blob: image, which `img-src data:` alone blocked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from tests.browser import chromium, missing
from tests.report_runs import write_scripted_run

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

DOWNLOAD = "() => Plotly.downloadImage(document.querySelector('.js-plotly-plot'), {format: 'png', filename: 'c'})"


def test_a_chart_downloads_as_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = write_scripted_run(tmp_path / "runs", conversations=2, turns=2, documents=1)
    assert main(["report", str(store.path), "--uniqueness", "exact"]) == 0
    capsys.readouterr()
    with chromium() as browser:
        page = browser.new_page(accept_downloads=True)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto(store.report_path.as_uri(), wait_until="load")
        page.wait_for_selector(".js-plotly-plot")
        with page.expect_download(timeout=20_000) as download:
            page.evaluate(DOWNLOAD)
        saved = tmp_path / "chart.png"
        download.value.save_as(saved)
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert problems == []
