"""Headless Chromium from the system packages (Debian `chromium`, installed by .ci/run), driven by playwright.

Never `playwright install`: that downloads a browser. We launch the system's binary instead."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not CHROMIUM.is_file() and not shutil.which("chromium"):
        return "no system chromium (.ci/run installs it with apt-get install -y chromium where apt-get exists)"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = str(CHROMIUM) if CHROMIUM.is_file() else shutil.which("chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()
