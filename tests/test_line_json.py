"""Run-file lines are encoded by pydantic-core (store.line_json), not the standard library: the same text but for
the spelling of some floats, the same NaN / Infinity, and lines written before still read."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragdive.records import Context, Conversation, ModelSpend, Score
from ragdive.store import RunStore, line_json
from ragdive.store.jsonl import parse_line, to_json_line
from ragdive.store.spend_journal import journal_for, read_journal

from .factories import make_conversation


def _stdlib(value: object) -> bytes:
    """What run-file lines were before line_json."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def test_text_is_the_standard_librarys_for_every_code_point() -> None:
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    rows = {f'k"\\{i}\n\x7f': ["".join(points[i : i + 4096]), f'"\\{i}\n'] for i in range(0, len(points), 4096)}
    assert line_json.dumps(rows) == _stdlib(rows)
    assert "é\u2028".encode() in line_json.dumps("é\u2028")  # raw UTF-8, not \u escapes (ensure_ascii=False)


def test_values_are_the_standard_librarys_but_for_the_spelling_of_some_floats() -> None:
    value = {"n": [0, -1, 2**70, -(2**80), True, False, None], "f": [0.5, -0.0, 1.0, 0.1 + 0.2, 1e16, 5e-324, 1e300]}
    assert line_json.dumps(value) == _stdlib(value)  # integers beyond 64 bits exact, as before
    for tiny in (1e-05, 1e-07, 0.000123):  # the documented difference: 1e-05 is now 0.00001, read back the same
        assert json.loads(line_json.dumps(tiny)) == tiny
    assert line_json.dumps(1e-05) == b"0.00001" and _stdlib(1e-05) == b"1e-05"


def test_non_finite_floats_are_written_as_before_and_read_back() -> None:
    """A typed float field keeps NaN / Infinity / -Infinity (the standard library's constants, which pydantic reads
    back); one inside details is null, as model_dump(mode="json") gives it: both exactly as before."""
    score = Score(conversation_id="c", metric="m", value=math.nan, details={"x": math.inf, "l": [-math.inf]})
    conversation = make_conversation("c1")
    conversation.turns[0].latency_s = math.inf
    conversation.turns[0].contexts = [Context(text="t", score=-math.inf)]
    for record in (score, conversation):
        line = to_json_line(record)
        assert line.encode() == _stdlib(record.model_dump(mode="json")) + b"\n"
    assert '"value":NaN' in to_json_line(score) and '"details":{"x":null,"l":[null]}' in to_json_line(score)
    again = parse_line(to_json_line(score), Score)
    assert math.isnan(again.value or 0.0) and again.details == {"x": None, "l": [None]}
    read = parse_line(to_json_line(conversation), Conversation)
    assert read.turns[0].latency_s == math.inf and read.turns[0].contexts[0].score == -math.inf


def test_a_lone_surrogate_fails_as_it_did(tmp_path: Path) -> None:
    """The standard library takes over what pydantic-core refuses; its text then fails to encode, as before."""
    store = RunStore.create(tmp_path)
    with pytest.raises(UnicodeEncodeError):
        store.append_score(Score(conversation_id="c", metric="m", value=1.0, reason="x\ud800y"))
    assert store.scores().records == []


def test_lines_of_the_standard_library_still_read(tmp_path: Path) -> None:
    """A run written before line_json (floats as 1e-05, spend lines with \\u escapes) reads the same."""
    score = Score(conversation_id="c", metric="m", value=1e-05, reason="é", details={"t": 1e-07})
    conversation = make_conversation("c1")
    store = RunStore.create(tmp_path)
    (store.path / "evaluations.jsonl").write_bytes(_stdlib(score.model_dump(mode="json")) + b"\n")
    (store.path / "conversations.jsonl").write_bytes(_stdlib(conversation.model_dump(mode="json")) + b"\n")
    old_spend = ModelSpend(role="judge", model="openai/modèle", calls=1, cost_usd=1e-05)
    old_line = json.dumps(old_spend.model_dump(exclude_defaults=True), separators=(",", ":")) + "\n"
    assert "\\u00e8" in old_line
    (store.path / "spend.jsonl").write_text(old_line)
    assert store.scores().records == [score] and store.conversations().records == [conversation]
    journal, _ = journal_for(store.path)
    journal.append(old_spend)
    lines = read_journal(store.path)[("judge", "openai/modèle")]
    assert lines == [old_spend, old_spend]
    assert (store.path / "spend.jsonl").read_text(encoding="utf-8").splitlines()[1] == (
        '{"role":"judge","model":"openai/modèle","calls":1,"cost_usd":0.00001}'
    )
