"""Stored text is capped (store.max_text_chars) with a visible marker: in answers, contexts and judge reasons."""

from __future__ import annotations

from pathlib import Path

from ragdive.records import Score
from ragdive.store import RunStore
from ragdive.store.caps import DEFAULT_MAX_TEXT_CHARS, cap_text


def test_a_judge_reason_and_its_details_are_cut_and_marked(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, config={"store": {"max_text_chars": 1000}})
    quoted = "the answer said " + "z" * 5000
    store.append_score(
        Score(
            conversation_id="c1",
            turn_index=0,
            metric="faithfulness",
            value=0.5,
            reason=quoted,
            details={"claims": [{"claim": quoted, "supported": True}]},
        )
    )
    (score,) = RunStore.open(store.path).scores().records
    assert score.reason.startswith(quoted[:1000]) and "5,016 characters, the first 1,000 kept" in score.reason
    assert score.details["claims"][0]["claim"] == score.reason and score.details["claims"][0]["supported"] is True
    assert score.value == 0.5  # only text is touched


def test_short_text_is_untouched_and_runs_without_a_setting_get_the_default(tmp_path: Path) -> None:
    assert cap_text("short", 10) == "short"
    store = RunStore.create(tmp_path, config={})
    assert store.max_text_chars == DEFAULT_MAX_TEXT_CHARS
    unlimited = RunStore.create(tmp_path / "u", config={"store": {"max_text_chars": None}})
    long = "q" * (DEFAULT_MAX_TEXT_CHARS + 10)
    unlimited.append_score(Score(conversation_id="c", metric="m", value=1.0, reason=long))
    assert unlimited.scores().records[0].reason == long


def test_a_line_longer_than_the_cap_is_cut_only_where_one_string_is(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, config={"store": {"max_text_chars": 100}})
    many = {"claims": [{"claim": "c" * 90} for _ in range(5)]}  # a 500-character line, no string over 100
    store.append_scores([Score(conversation_id="c1", metric="m", value=1.0, reason="r" * 100, details=many)])
    store.append_scores([Score(conversation_id="c2", metric="m", value=1.0, reason="s" * 101, details=many)])
    kept, cut = RunStore.open(store.path).scores().records
    assert kept.reason == "r" * 100 and kept.details == many
    assert cut.reason.startswith("s" * 100) and "101 characters, the first 100 kept" in cut.reason
    assert cut.details == many
