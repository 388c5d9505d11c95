"""Records read from a run's files stay small: one shared set of given fields per record class, short repeated
strings shared between lines, and a valid JSON line that is not a record still refused (not taken as torn)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.errors import StoreError
from ragdive.records import Conversation, Score
from ragdive.store.jsonl import read_jsonl, read_jsonl_tail, to_json_line


def _scores(n: int) -> list[Score]:
    return [
        Score(conversation_id="c1", turn_index=i, metric="faithfulness", value=1.0, judge_model="openai/judge")
        for i in range(n)
    ]


def _write(path: Path, records: list[Score]) -> None:
    path.write_text("".join(to_json_line(r) for r in records), encoding="utf-8")


def test_records_read_share_their_fields_set_and_their_repeated_strings(tmp_path: Path) -> None:
    path = tmp_path / "evaluations.jsonl"
    _write(path, _scores(3))
    a, b, c = read_jsonl(path, Score).records
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert a.model_fields_set == set(Score.model_fields)
    assert a.metric is b.metric and a.judge_model is c.judge_model and a.conversation_id is c.conversation_id
    nested = Conversation.model_validate_json(
        '{"id":"c1","index":0,"persona":"p","document_ids":[],"seed":1,"turns":[]}'
    ).model_dump_json()
    one, two = Conversation.model_validate_json(nested), Conversation.model_validate_json(nested)
    assert one.__pydantic_fields_set__ is two.__pydantic_fields_set__


def test_setting_a_field_on_one_record_leaves_the_others_fields_alone(tmp_path: Path) -> None:
    path = tmp_path / "evaluations.jsonl"
    _write(path, _scores(2))
    a, b = read_jsonl(path, Score).records
    a.value = 0.5
    a.note = "an extra field"  # extra="allow": pydantic adds its name to the fields set
    assert "note" in a.model_fields_set
    assert "note" not in b.model_fields_set and "note" not in Score.model_fields
    assert b.model_fields_set == set(Score.model_fields)
    assert read_jsonl(path, Score).records[0].model_fields_set == set(Score.model_fields)


def test_a_record_built_with_some_fields_keeps_its_own_set() -> None:
    score = Score(conversation_id="c1", turn_index=0, metric="m", value=1.0)
    assert score.model_fields_set == {"conversation_id", "turn_index", "metric", "value"}
    assert set(score.model_dump(exclude_unset=True)) == {"conversation_id", "turn_index", "metric", "value"}


def test_a_torn_line_is_skipped_and_a_json_line_that_is_no_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evaluations.jsonl"
    _write(path, _scores(2))
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"conversation_id":"c1","turn_ind\n')
    result = read_jsonl(path, Score)
    assert [s.turn_index for s in result.records] == [0, 1] and result.torn_lines == [3]
    records, _ = read_jsonl_tail(path, Score)
    assert [s.turn_index for s in records] == [0, 1]
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"conversation_id":"c1","turn_index":"first"}\n')
    with pytest.raises(StoreError, match="line 4 is not a valid Score"):
        read_jsonl(path, Score)
    with pytest.raises(StoreError, match="not a valid Score"):
        read_jsonl_tail(path, Score)
