"""Size and load time of the HTML report of a scripted run, measured in one run.

    python benchmarks/report_size.py [--conversations 100] [--turns 5] [--loads 3] [--no-full-bundle]

Builds a scripted run (tests/report_runs.py), writes its report, and prints: the file's size in MB, the time to
write it, and in headless system Chromium the time from navigation to the `load` event, to the first contentful
paint, and to when the charts and the conversation browser are drawn (a fresh browser for each load: no code
cache, as when a person first opens the file); the median of --loads loads. The same page with plotly.py's full
plotly.js bundle instead of the vendored cartesian one is measured alternately with it, and the ratios printed
(--no-full-bundle skips it). The budget of issue 14: <= 8 MB and <= 3 s for 100 conversations x 5 turns. Wall
times on a shared 2-core machine are noisy: compare the ratios, and the load average printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.report import html as report_html  # noqa: E402
from ragdive.report import report_data, write_report  # noqa: E402
from tests.browser import chromium, missing  # noqa: E402
from tests.report_runs import write_scripted_run  # noqa: E402

TIMING = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return {
    ready: Number(document.body.dataset.readyMs),
    load: nav.loadEventStart,
    domContentLoaded: nav.domContentLoadedEventEnd,
    fcp: fcp ? fcp.startTime : null,
  };
}"""


def full_bundle_page(html: str) -> str:
    """The same report with plotly.py's full plotly.js bundle in place of the vendored cartesian one."""
    from plotly.offline import get_plotlyjs

    vendored = str(report_html._plotly_js())
    assert vendored in html
    return html.replace(vendored, get_plotlyjs())


def load_once(path: Path) -> dict[str, Any]:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_selector("#conversation-list details")
        timing = page.evaluate(TIMING)
        timing["shown"] = page.locator("#conversation-list details").count()
        return timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--loads", type=int, default=3, help="loads per page (the median is printed)")
    parser.add_argument("--no-full-bundle", action="store_true", help="do not measure the full-bundle page")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = write_scripted_run(Path(tmp), conversations=args.conversations, turns=args.turns)
        started = time.perf_counter()
        path = write_report(store)
        written = time.perf_counter() - started
        pages = {"cartesian bundle (shipped)": path}
        if not args.no_full_bundle:
            full = Path(tmp) / "full-bundle.html"
            full.write_text(full_bundle_page(report_html.render_report(report_data(store))), encoding="utf-8")
            pages["full bundle (plotly.py's)"] = full
        print(f"report of {args.conversations} conversations x {args.turns} turns (write {written:.2f} s)")
        reason = missing()
        if reason:
            for name, p in pages.items():
                print(f"  {name:28} {p.stat().st_size / 1e6:.2f} MB; load time not measured: {reason}")
            return
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in pages}
        for _ in range(args.loads):
            for name, p in pages.items():  # alternately: both see the same machine load
                runs[name].append(load_once(p))
        medians = {}
        for name, p in pages.items():
            m = {k: statistics.median(r[k] for r in runs[name]) for k in ("load", "ready", "domContentLoaded")}
            fcps = [r["fcp"] for r in runs[name] if r["fcp"] is not None]
            medians[name] = (p.stat().st_size, m)
            print(f"  {name}")
            print(f"    size        {p.stat().st_size / 1e6:.2f} MB ({p.stat().st_size} bytes)")
            print(f"    load event  {m['load'] / 1000:.2f} s (DOMContentLoaded {m['domContentLoaded'] / 1000:.2f} s)")
            fcp = f"{statistics.median(fcps) / 1000:.2f} s" if fcps else "n/a"
            shown = runs[name][0]["shown"]
            print(f"    first paint {fcp}; charts and browser drawn {m['ready'] / 1000:.2f} s; {shown} listed")
        if len(medians) == 2:
            (small, a), (big, b) = medians.values()
            print(f"  full / cartesian: size x{big / small:.2f}, load x{b['load'] / a['load']:.2f}")
        print(f"  machine load average {os.getloadavg()[0]:.2f} ({args.loads} loads per page, medians)")


if __name__ == "__main__":
    main()
