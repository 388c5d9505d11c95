"""The metric registry: one declaration per metric, read by config checks, the evaluator and comparisons."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragdive.errors import ConfigError
from ragdive.evaluation import Evaluator, Judge
from ragdive.evaluation.metrics import Outcome, TurnMetric, all_metrics, check_metric_names, metric, metric_info
from ragdive.evaluation.metrics import registry as metric_registry
from ragdive.evaluation.metrics.base import fingerprint
from ragdive.records import Turn
from tests.factories import make_conversation

from .scripted_judge import scripted_judge

BUILT_IN = ["faithfulness", "context_precision", "context_recall", "correctness", "forgetfulness", "context_retention"]


@pytest.fixture
def toy_metric() -> Iterator[str]:
    """A metric defined outside the package, as a user's plug-in would be: one class, no list edited."""

    @metric("answer_length", kind="turn", inputs=("answer",), version=3)
    class AnswerLength(TurnMetric):
        needs_contexts = False

        async def measure(self, judge: Judge, turn: Turn) -> Outcome:
            return Outcome(float(len((turn.answer or "").split())), "words in the answer")

    yield "answer_length"
    metric_registry.METRICS.remove("answer_length")


def test_every_built_in_metric_is_registered_with_its_kind_and_direction() -> None:
    names = {m.name: m for m in all_metrics()}
    assert set(BUILT_IN) <= set(names)
    assert {m.name for m in all_metrics("conversation")} == {"forgetfulness", "context_retention", "persona_adherence"}
    assert [n for n in BUILT_IN if names[n].lower_is_better] == ["forgetfulness"]
    assert all(names[n].version >= 1 and len(fingerprint(names[n])) == 12 for n in BUILT_IN)


def test_unknown_and_wrong_kind_names_are_one_readable_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown metric\(s\) faithfullness, recal; known: .*faithfulness"):
        check_metric_names(["faithfullness", "correctness", "recal"])
    with pytest.raises(ConfigError, match="forgetfulness: static runs have one turn; allowed: .*correctness"):
        check_metric_names(["forgetfulness"], kind="turn", why="static runs have one turn")
    assert check_metric_names(["correctness", "faithfulness", "correctness"]) == ["correctness", "faithfulness"]


def test_a_second_metric_with_a_taken_name_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):

        @metric("correctness", kind="turn", inputs=("answer",))
        class Impostor(TurnMetric):
            async def measure(self, judge: Judge, turn: Turn) -> Outcome:
                return Outcome(0.0, "")


async def test_a_plug_in_metric_is_scored_by_name_and_carries_its_version(toy_metric: str) -> None:
    model, backend = scripted_judge()
    conversation = make_conversation("c", turns=2)
    scores = await Evaluator(Judge(model), [toy_metric, "correctness"]).score_conversations([conversation])
    toy = [s for s in scores if s.metric == toy_metric]
    assert len(toy) == 2 and all(s.value is not None and s.value > 0 for s in toy)
    assert {s.metric_version for s in toy} == {3}
    assert len(backend.calls) == 2  # only correctness asked the judge
    assert metric_info(toy_metric).lower_is_better is False


def test_the_fingerprint_follows_every_prompt_variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "correctness.md").write_text("Is the answer right?")
    (tmp_path / "base" / "correctness.md").write_text("Q: right? A:")
    monkeypatch.setattr(metric_registry, "PROMPTS", tmp_path)
    info = metric_info("correctness")
    before = info.fingerprint()
    (tmp_path / "base" / "correctness.md").write_text("Q: correct? A:")
    assert info.fingerprint() != before  # editing the base model's variant counts too
    (tmp_path / "base" / "correctness.md").write_text("Q: right? A:")
    assert info.fingerprint() == before
