"""Render a run's report into one self-contained HTML file: the page, its styles, its script, plotly.js (its
cartesian bundle, inlined once) and the data, so it opens offline from disk with no server and nothing fetched.

Escaping, in the two places untrusted text can reach: the jinja2 template autoescapes everything it prints, and
the data the page's script reads goes as JSON inside `<script type="application/json">` with `<`, `>` and `&`
written as \\u escapes, or packed (packing.py) as 7-bit text with no `<` at all, so no string can close the block
or open a tag. The script puts text into the page with `textContent` only.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..analysis import RunScores
from ..analysis.conversations import DEFAULT_THRESHOLD, Embedder, PairJudge
from ..store import RunStore
from ..store.run import write_text_atomic
from ..template_cache import bytecode_cache
from . import text7
from .charts import figures
from .data import report_data
from .packing import pack

TEMPLATES = Path(__file__).parent / "templates"


def json_block(value: Any) -> Markup:
    """JSON safe inside a <script> element: nothing in it can end the element or start markup."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return Markup(text)  # noqa: S704 - escaped just above, for the JSON-in-script context


def text7_block(text: str) -> Markup:
    """Packed 7-bit text (text7.py) as the template writes it: unescaped, since an entity would not be decoded
    inside a script element, and refused if it holds the one character that could end that element."""
    if "<" in text:
        raise ValueError("packed text with a '<'")
    return Markup(text)  # noqa: S704 - no '<' (checked): it cannot end the script element or open a tag


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        bytecode_cache=bytecode_cache(),  # compiled once, kept from one process to the next (~0.03 s a run)
        autoescape=True,  # every value printed by the template is escaped unless marked safe above
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, num=num, json_block=json_block, text7_block=text7_block)
    return env


# Plotly's official cartesian partial bundle, vendored unchanged (vendor/README.md: source, license, sha256): it
# has every trace type the charts use (scatter, bar, heatmap) at a third of the full bundle's size, which halves
# the report's load time. Its version is plotly.py's own plotly.js version (checked by tests/test_report.py).
PLOTLY_JS = TEMPLATES.parent / "vendor" / "plotly-cartesian.min.js"
PLOTLY_JS_VERSION = "4.1.1"
PLOTLY_JS_SHA256 = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"


@cache
def packed_plotly_js() -> str:
    """The bundle as the page embeds it: gzip'ed and written as 7-bit text like the conversations (1.50 MB of
    JavaScript in 0.58 MB; base64 made it 0.66 MB), inflated by the page's script and run before it draws
    (report.html.j2's Content-Security-Policy allows it)."""
    return pack_bytes(PLOTLY_JS.read_bytes())


def pack_bytes(data: bytes) -> str:
    """gzip (zlib's level 9, which works outside the GIL while a run starts; no date: the same bytes give the same
    text) and 7-bit text (text7.py), as the page inflates it."""
    return text7.encode(gzip.compress(data, compresslevel=9, mtime=0))


@cache
def _own_file(name: str) -> Markup:
    return Markup((TEMPLATES / name).read_text(encoding="utf-8"))  # noqa: S704 - our own file


def prepare() -> None:
    """Make the parts of every report that do not depend on the run, once per process: the compiled template
    (~0.03 s), plotly.js packed (~0.045 s: zlib at level 9), the page's script and style. `ragdive run` has a
    thread do this while the run is still waiting for its models (zlib works outside the GIL), so the end of
    the run only renders the run's own data; nothing is lost when it was not called first."""
    environment().get_template("report.html.j2")
    packed_plotly_js()
    _own_file("browser.js")
    _own_file("report.css")


def render_report(data: dict[str, Any]) -> str:
    template = environment().get_template("report.html.j2")
    return template.render(
        data=data,
        packed=pack(data["conversations"]),
        figures=figures(data["analysis"]),
        plotly_js=packed_plotly_js(),
        script=_own_file("browser.js"),
        style=_own_file("report.css"),
    )


def write_report(
    store: RunStore,
    path: Path | None = None,
    embed: Embedder | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    judge_pairs: PairJudge | None = None,
    read: RunScores | None = None,
    themes: list[dict[str, Any]] | None = None,
) -> Path:
    """Write the run's report (default: report.html in the run directory) and return where it went. ``read``:
    the run's conversations and scores, when the caller has them (see report_data)."""
    data = report_data(store, embed, threshold=threshold, judge_pairs=judge_pairs, read=read, themes=themes)
    html = render_report(data)
    if path is None or path.resolve() == store.report_path.resolve():
        return store.write_report(html)  # inside the run: the store writes run files
    write_text_atomic(path, html)  # anywhere else the user asked for
    return path
