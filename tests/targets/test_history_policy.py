"""target.history parsed once into a HistoryPolicy that owns select(history)."""

from __future__ import annotations

import pytest

from ragdive.config import validate_config
from ragdive.config.history import HistoryPolicy
from ragdive.errors import ConfigError
from ragdive.models import Message

HISTORY = [Message(role=r, content=f"{r}{i}") for i in range(3) for r in ("user", "assistant")]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("none", []),
        ("first", ["user0"]),
        ("full", [m.content for m in HISTORY]),
        ("last:3", ["assistant1", "user2", "assistant2"]),
        ("last:3u", ["assistant1", "user2", "assistant2"]),
        ("last:2x", ["user1", "assistant1", "user2", "assistant2"]),
        ("last:9x", [m.content for m in HISTORY]),
    ],
)
def test_each_policy_keeps_what_it_names(text: str, kept: list[str]) -> None:
    policy = HistoryPolicy.parse(text)
    assert [m.content for m in policy.select(HISTORY)] == kept
    assert HistoryPolicy.parse(str(policy)) == policy  # last:3 reads back as last:3u, the same policy


def test_the_config_parses_it_once_and_refuses_a_bad_one() -> None:
    config = validate_config({"target": {"type": "reference", "history": "last:2x"}})
    assert config.target is not None and config.target.history_policy == HistoryPolicy("last", 2, "x")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="target.history"):
        validate_config({"target": {"type": "reference", "history": "last:0"}})
    with pytest.raises(ConfigError, match="history policy 'recent'"):
        HistoryPolicy.parse("recent")
