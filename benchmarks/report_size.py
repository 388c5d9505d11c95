"""Size and load time of the HTML report of a scripted run, measured in one run.

    python benchmarks/report_size.py [--conversations 100] [--turns 5]

Builds a scripted run (tests/report_runs.py), writes its report, and prints: the file's size in MB (plotly.js,
inlined once, is most of it), the time to write it, and in headless system Chromium the time from navigation to
the `load` event, to the first contentful paint, and to when the charts and the conversation browser are drawn
(a fresh browser: no code cache, as when a person first opens the file). The budget of
issue 14: <= 8 MB and <= 3 s for 100 conversations x 5 turns. Wall times on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragdive.report import write_report  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = write_scripted_run(Path(tmp), conversations=args.conversations, turns=args.turns)
        started = time.perf_counter()
        path = write_report(store)
        written = time.perf_counter() - started
        size = path.stat().st_size
        print(f"report of {args.conversations} conversations x {args.turns} turns")
        print(f"  size        {size / 1e6:.2f} MB ({size} bytes)")
        print(f"  write       {written:.2f} s")
        reason = missing()
        if reason:
            print(f"  load time   not measured: {reason}")
            return
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_selector("#conversation-list details")
            t = page.evaluate(TIMING)
            shown = page.locator("#conversation-list details").count()
        print(f"  load event  {t['load'] / 1000:.2f} s (DOMContentLoaded {t['domContentLoaded'] / 1000:.2f} s)")
        fcp = "n/a" if t["fcp"] is None else f"{t['fcp'] / 1000:.2f} s"
        print(f"  first paint {fcp}; charts and browser drawn {t['ready'] / 1000:.2f} s; {shown} conversations listed")
        print(f"  machine load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
