"""Render a run's report into one self-contained HTML file: the page, its styles, its script, plotly.js (its
cartesian bundle, inlined once) and the data, so it opens offline from disk with no server and nothing fetched.

Escaping, in the two places untrusted text can reach: the jinja2 template autoescapes everything it prints, and
the data the page's script reads goes as JSON inside `<script type="application/json">` with `<`, `>` and `&`
written as \\u escapes, so no string can close the block or open a tag. The script puts text into the page with
`textContent` only.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..analysis import RunScores
from ..analysis.conversations import DEFAULT_THRESHOLD, Embedder, PairJudge
from ..store import RunStore
from ..store.run import write_text_atomic
from .charts import figures
from .data import report_data

TEMPLATES = Path(__file__).parent / "templates"


def json_block(value: Any) -> Markup:
    """JSON safe inside a <script> element: nothing in it can end the element or start markup."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return Markup(text)  # noqa: S704 - escaped just above, for the JSON-in-script context


def packed_conversations(conversations: Iterable[dict[str, Any]]) -> str:
    """The conversation browser's data as the page embeds it: JSON, gzip'ed, base64 (decoded in the page by the
    browser's own DecompressionStream). Each distinct context text is stored once, in ``contexts``, and a turn's
    context names it by index (``t``): a target returns the same passages for many questions, and a judge's
    contexts were the largest part of a big report (issue 27 measured 11.4 MB at 1,000 x 5). Each conversation is
    encoded and compressed as it comes, so neither the whole JSON text nor every view is ever held at once.
    Base64 has no character that could end the script element."""
    texts: dict[str, int] = {}

    def ref(context: dict[str, Any]) -> dict[str, Any]:
        index = texts.setdefault(context["text"], len(texts))
        return {"t": index, "source": context["source"], "score": context["score"]}

    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: a gzip stream, its header without a date
    chunks: list[bytes] = []

    def put(text: str) -> None:
        chunks.append(packer.compress(text.encode("utf-8")))

    put('{"conversations":[')
    for n, c in enumerate(conversations):
        packed = {**c, "turns": [{**t, "contexts": [ref(x) for x in t["contexts"]]} for t in c["turns"]]}
        put(("," if n else "") + json.dumps(packed, ensure_ascii=False, separators=(",", ":")))
    put('],"contexts":' + json.dumps(list(texts), ensure_ascii=False, separators=(",", ":")) + "}")
    chunks.append(packer.flush())
    return base64.b64encode(b"".join(chunks)).decode("ascii")


def unpacked_conversations(block: str) -> list[dict[str, Any]]:
    """The inverse of packed_conversations (what the page's script rebuilds), for tests and tools."""
    data = json.loads(gzip.decompress(base64.b64decode(block)))
    texts = data["contexts"]
    for conversation in data["conversations"]:
        for turn in conversation["turns"]:
            turn["contexts"] = [
                {"text": texts[c["t"]], "source": c["source"], "score": c["score"]} for c in turn["contexts"]
            ]
    return list(data["conversations"])


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every value printed by the template is escaped unless marked safe above
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, num=num, json_block=json_block)
    return env


# Plotly's official cartesian partial bundle, vendored unchanged (vendor/README.md: source, license, sha256): it
# has every trace type the charts use (scatter, bar, heatmap) at a third of the full bundle's size, which halves
# the report's load time. Its version is plotly.py's own plotly.js version (checked by tests/test_report.py).
PLOTLY_JS = TEMPLATES.parent / "vendor" / "plotly-cartesian.min.js"
PLOTLY_JS_VERSION = "4.1.1"
PLOTLY_JS_SHA256 = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"


@cache
def packed_plotly_js() -> str:
    """The bundle as the page embeds it: gzip'ed and base64'ed like the conversations (1.50 MB of JavaScript in
    0.66 MB), inflated by the page's script and run before it draws (report.html.j2's Content-Security-Policy
    allows it)."""
    return pack_bytes(PLOTLY_JS.read_bytes())


def pack_bytes(data: bytes) -> str:
    """gzip (level 9, no date: the same bytes give the same text) and base64, as the page inflates it."""
    return base64.b64encode(gzip.compress(data, compresslevel=9, mtime=0)).decode("ascii")


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
        packed=packed_conversations(data["conversations"]),
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
