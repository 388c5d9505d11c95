"""`ragdive report`: the file it writes, where, and how hostile run text is kept as data (browser: see
test_report_browser.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.report import report_data
from ragdive.report.html import json_block
from ragdive.report.packing import pack, read_stream, unpack
from tests.report_runs import HOSTILE, write_scripted_run


def test_report_is_written_into_the_run_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = write_scripted_run(tmp_path)
    assert main(["report", str(store.path)]) == 0
    assert capsys.readouterr().out.strip() == str(store.report_path)
    html = store.report_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "report-test" in html


def test_the_report_reads_the_run_files_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # two copies of every record alive at once were half of a large report's peak memory
    from ragdive.store import RunStore

    store = write_scripted_run(tmp_path)
    reads: list[str] = []
    for name in ("current_conversations", "current_scores"):
        original = getattr(RunStore, name)

        def counted(self: RunStore, *args: object, _name: str = name, _original: object = original) -> object:
            reads.append(_name)
            return _original(self, *args)  # type: ignore[operator]

        monkeypatch.setattr(RunStore, name, counted)
    assert main(["report", str(store.path), "--uniqueness", "exact"]) == 0
    assert sorted(reads) == ["current_conversations", "current_scores"]


def test_report_goes_where_o_says(tmp_path: Path) -> None:
    store = write_scripted_run(tmp_path)
    target = tmp_path / "out" / "r.html"
    assert main(["report", str(store.path), "-o", str(target), "--uniqueness", "exact"]) == 0
    assert target.is_file() and not store.report_path.exists()


def test_a_missing_run_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no run directory" in err


def test_the_file_is_self_contained(tmp_path: Path) -> None:
    store = write_scripted_run(tmp_path)
    assert main(["report", str(store.path)]) == 0
    html = store.report_path.read_text(encoding="utf-8")
    # nothing fetched: no external script, stylesheet or image (links inside plotly.js's code are not fetched)
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html)
    assert "default-src 'none'" in html


def test_hostile_text_never_reaches_the_page_as_markup(tmp_path: Path) -> None:
    store = write_scripted_run(tmp_path)
    store.update_manifest(name="<b>bold</b> run", target="<script>alert(2)</script>")
    assert main(["report", str(store.path)]) == 0
    html = store.report_path.read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html  # autoescaped by the template
    data = unpacked_from_page(html)
    assert data[0]["turns"][0]["answer"] == HOSTILE  # the packed blocks give back the exact text


def unpacked_from_page(html: str) -> list[dict[str, object]]:
    """The conversations as the page's script reads them, from the blocks it reads them from."""

    def block(attribute: str) -> list[str]:
        return re.findall(rf'<script type="application/octet-stream" {attribute}[^>]*>(.*?)</script>', html, re.S)

    (words,), (listed,), (contexts,) = (
        block('id="report-words"'),
        block('id="report-data"'),
        block('id="report-contexts"'),
    )
    return unpack(words, listed, contexts, block('class="report-turns"'))


def test_json_block_escapes_what_could_end_a_script() -> None:
    text = str(json_block({"a": "</script><!-- & >"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & >"}


def test_packed_conversations_store_each_context_once_and_give_the_data_back(tmp_path: Path) -> None:
    import gzip

    from ragdive.report import text7

    conversations = list(report_data(write_scripted_run(tmp_path, conversations=5, turns=2))["conversations"])
    shared = {"text": "The same passage <for> every turn & question.", "source": "s", "score": 0.5}
    for conversation in conversations:
        for turn in conversation["turns"]:
            turn["contexts"] = [shared, {**shared, "score": None}]
    conversations[1]["turns"][0]["answer"] = "\r\n\x00 é 漢字 \U0001f600 </script> x\ty"  # every kind of character
    packed = pack(conversations, per_chunk=2)
    assert len(packed.chunks) == 3 and packed.count == 5  # 2 + 2 + 1 conversations' turns
    assert unpack(packed.vocabulary, packed.conversations, packed.contexts, packed.chunks) == json.loads(
        json.dumps(conversations)
    )
    tokens = json.loads(gzip.decompress(text7.decode(packed.vocabulary)))
    assert read_stream(packed.contexts, tokens) == [shared["text"]]  # stored once, named by index from every turn
    for block in (packed.vocabulary, packed.conversations, packed.contexts, *packed.chunks):
        assert "<" not in block and "\r" not in block and "\x00" not in block


def test_packing_spends_the_strongest_gzip_level_only_on_a_large_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.report import packing

    conversations = list(report_data(write_scripted_run(tmp_path, conversations=3, turns=2))["conversations"])
    levels: list[int] = []
    compress = packing.deflate.gzip_compress
    monkeypatch.setattr(
        packing.deflate, "gzip_compress", lambda data, level: levels.append(level) or compress(data, level)
    )
    small = pack(conversations)
    assert levels and set(levels) == {packing.QUICK_LEVEL}  # a run's own report is written while its user waits
    levels.clear()
    monkeypatch.setattr(packing, "LARGE", 1)  # the same streams counted as a large report's
    large = pack(conversations)
    assert set(levels) == {packing.LEVEL} and packing.QUICK_LEVEL != packing.LEVEL
    for packed in (small, large):  # either level, the same data back
        assert unpack(packed.vocabulary, packed.conversations, packed.contexts, packed.chunks) == json.loads(
            json.dumps(conversations)
        )


def test_7_bit_text_gives_every_byte_back() -> None:
    from ragdive.report import text7

    data = bytes(range(256)) * 3 + b"\x00\r<"
    for size in range(0, 40):
        text = text7.encode(data[:size])
        assert text7.decode(text) == data[:size]
        assert not set(text) & {"\x00", "\r", "<"}
    assert len(text7.encode(data).encode("utf-8")) < len(data) * 1.2  # base64 is 4/3


def test_report_data_holds_the_run(tmp_path: Path) -> None:
    data = report_data(write_scripted_run(tmp_path, conversations=3, turns=2))
    assert [c["persona"] for c in data["conversations"]] == ["curious", "precise", "curious"]
    summary = {s["metric"]: s for s in data["summary"]}
    assert summary["correctness"]["n_unscored"] == 1
    assert summary["correctness"]["unscored_reasons"] == {"judge_failed": 1}
    assert ("seed", "7") in data["setup"] and ("corpus", "corpus/docs") in data["setup"]
    views = list(data["conversations"])  # made as they are read, again at every read
    assert views[0]["has_unscored"] and not views[1]["has_unscored"] and len(data["conversations"]) == len(views)


def test_the_vendored_plotly_js_is_the_official_bundle_for_this_plotly() -> None:
    import hashlib

    from plotly.offline import get_plotlyjs_version

    from ragdive.report import html

    js = html.PLOTLY_JS.read_bytes()
    assert hashlib.sha256(js).hexdigest() == html.PLOTLY_JS_SHA256  # unchanged since vendored (vendor/README.md)
    assert js.startswith(f"/**\n* plotly.js (cartesian - minified) v{html.PLOTLY_JS_VERSION}\n".encode())
    assert (html.PLOTLY_JS.parent / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    # plotly.py writes the figure JSON for its own plotly.js: same major version (the schema can break between
    # majors; vendor/README.md says how to update)
    assert html.PLOTLY_JS_VERSION.split(".")[0] == get_plotlyjs_version().split(".")[0]


def test_charts_are_figures_plotly_accepts_unchanged_with_its_own_template() -> None:
    """The charts are written as plain dicts (no plotly.py import at the end of a run): plotly.py's validation
    takes each one and gives it back unchanged, and the vendored template is the installed plotly.py's."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    from ragdive.report import charts

    vendored = json.loads(charts.TEMPLATE_FILE.read_text(encoding="utf-8"))
    assert vendored == json.loads(json.dumps(pio.templates["plotly_white"].to_plotly_json()))
    analysis = {
        "curves": {"faithfulness": [{"turn": 1, "mean": 0.5, "ci": [0.4, 0.6]}, {"turn": 2, "mean": 0.7, "ci": None}]},
        "flow": {
            "per_turn": {
                "1": {"shares": {"initial": 1.0, "correction": 0.0}},
                "2": {"shares": {"initial": 0.0, "correction": 1.0}},
            },
            "overall": {"counts": {"initial": 1, "correction": 1}},
        },
        "rejections": {
            "cells": [
                {"category": "not_grounded", "turn": 1, "count": 2},
                {"category": "leaks", "turn": 2, "count": 1},
            ],
            "by_category": {"not_grounded": 2, "leaks": 1},
        },
    }
    made = charts.figures(analysis)
    assert set(made) == {"curves", "flow", "rejections"}
    for figure in made.values():
        assert json.loads(go.Figure(figure).to_json()) == figure


def test_judged_uniqueness_is_shown_beside_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragdive.models import ScriptedModel, registry

    asked: list[str] = []

    def all_the_same(messages: list, schema: object) -> dict[str, object]:
        asked.append(messages[-1].content)
        return {"reason": "same focus", "same": True}  # a scripted judge: every differently worded pair is one

    monkeypatch.setitem(
        registry.PROVIDERS._entries, "pairjudge", lambda name, **_: ScriptedModel(name, responder=all_the_same)
    )
    store = write_scripted_run(tmp_path, conversations=6, turns=3, documents=3)
    args = [str(store.path), "--uniqueness", "exact", "--model", "judge=pairjudge/j", "--no-cache"]
    assert main(["analyze", *args, "--json"]) == 0
    analysis = json.loads(capsys.readouterr().out)["groups"]["all"]
    assert main(["report", *args]) == 0
    html = store.report_path.read_text(encoding="utf-8")

    def rows(method: str) -> dict[str, list[str]]:
        table = re.search(rf'<table data-method="{method}">(.*?)</table>', html, re.S)
        assert table is not None, method
        found = re.findall(r'<tr data-turn="([^"]+)">(.*?)</tr>', table.group(1), re.S)
        return {turn: re.findall(r"<td>([^<]*)</td>", cells) for turn, cells in found}

    judged, exact = rows("judge"), rows("exact")
    for method, shown in (("judge", judged), ("exact", exact)):
        u = analysis["uniqueness_judge" if method == "judge" else "uniqueness"]
        assert {t: row[2] for t, row in shown.items() if t != "all"} == {
            t: str(v["unique"]) for t, v in u["per_turn"].items()
        }
    # the last turn's questions differ in their text: unique by exact text, all the same for this judge
    assert exact["3"][2] == "6" and judged["3"][2] == "0"
    assert asked  # the judge was really asked


def test_varints_match_the_pages_reading_at_every_group_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from ragdive.report import packing

    def one(n: int) -> bytes:  # the format browser.js reads: 7 bits a byte, least significant first
        out = bytearray()
        while n >= 128:
            out.append(n & 127 | 128)
            n >>= 7
        return bytes(out + bytes([n]))

    numbers = [0, 1, 127, 128, 255, 16383, 16384, 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**32 - 1, 300]
    for size in (1 << 20, 3):  # whole, and in slices of 3 numbers (or bytes) cut anywhere
        monkeypatch.setattr(packing, "SLICE", size)
        data = packing.varints(np.array(numbers, dtype=np.uint32))
        assert data == b"".join(map(one, numbers)) == b"".join(map(packing.varint, numbers))
        assert packing.read_varints(bytearray(data)).tolist() == numbers
    assert packing.varints(np.array([], dtype=np.uint32)) == b""
    assert packing.read_varints(b"").tolist() == []


def test_the_vocabulary_gives_the_frequent_tokens_the_small_numbers() -> None:
    import gzip

    from ragdive.report import text7

    # 200 words used once, then one used 1,000 times: in order of first use it would be past 200 (two bytes each)
    conversations = [{"id": f"c{i}", "note": f"rare{i}", "turns": []} for i in range(200)]
    conversations.append({"id": "c200", "note": "common" + " common" * 1000, "turns": []})
    packed = pack(conversations)
    tokens = json.loads(gzip.decompress(text7.decode(packed.vocabulary)))
    assert tokens.index(" common") < 128 <= max(tokens.index(f"rare{i}") for i in range(200))
    assert unpack(packed.vocabulary, packed.conversations, packed.contexts, packed.chunks) == conversations


def test_tokens_give_every_character_back_and_a_word_keeps_its_space() -> None:
    from ragdive.report.packing import TOKEN

    for text in ["Ends.  Two spaces. The end", ' ( x ) ", "\n\n é 漢字 \U0001f600 ', "...", " ", "", 'a":"b', ". "]:
        assert "".join(TOKEN.findall(text)) == text
    assert TOKEN.findall("cat. The dog") == ["cat", ".", " The", " dog"]  # " The" as mid-sentence: one form
