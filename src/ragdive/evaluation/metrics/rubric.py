"""Rubric metrics declared in YAML (``evaluation.custom_metrics``): one criterion, judged from the inputs the
declaration names, on a yes/no or 1-5 scale mapped to [0, 1]. They go through the same machinery as the built-ins
(the judge's structured answer with its reason first, unscored when the judge fails, the model cache, a version and
a prompt fingerprint on every score), with one prompt file for all of them: prompts/rubric.md (base/rubric.md for
a base model). A declaration becomes a metric class registered under its name for this process."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ...config.evaluation import CustomMetricConfig
from ...errors import ConfigError
from ...records import Conversation, Turn
from ..judge import Judge
from .base import (
    NO_GROUND_TRUTH_NOTE,
    ConversationMetric,
    Outcome,
    TurnMetric,
    Unscorable,
    Unscored,
    numbered_contexts,
)
from .registry import METRICS, MetricInfo, _import_builtins

CANNOT_TELL = "cannot_tell"
"""The judge's answer when the material it was shown cannot decide the criterion (the declaration names too few
inputs for it): the item is unscored (kind ``undecidable``), never a guessed yes or no."""


class YesNoVerdict(BaseModel):
    reason: str
    """Why, before the verdict (the judge reasons first)."""
    verdict: Literal["yes", "no", "cannot_tell"]


class RatingVerdict(BaseModel):
    reason: str
    """Why, before the rating."""
    rating: Annotated[int, Field(ge=1, le=5)] | Literal["cannot_tell"]


def value_of(spec: CustomMetricConfig, verdict: YesNoVerdict | RatingVerdict) -> float:
    """The verdict on [0, 1]; `cannot_tell` is Unscorable (kind ``undecidable``) with the judge's reason."""
    if CANNOT_TELL in (getattr(verdict, "verdict", None), getattr(verdict, "rating", None)):
        raise Unscorable(
            f"the judge could not decide the criterion from the inputs shown: {verdict.reason}", kind="undecidable"
        )
    if isinstance(verdict, YesNoVerdict):
        return 1.0 if verdict.verdict == "yes" else 0.0
    assert isinstance(verdict.rating, int)
    return (verdict.rating - 1) / 4


def _ask(judge: Judge, spec: CustomMetricConfig, **material: Any) -> Any:
    schema = YesNoVerdict if spec.scale == "yes_no" else RatingVerdict
    return judge.ask("rubric", schema, criterion=spec.criterion.strip(), scale=spec.scale, level=spec.level, **material)


def _turn_material(spec: CustomMetricConfig, turn: Turn) -> dict[str, Any]:
    wanted = set(spec.inputs)
    return {
        "question": turn.rag_input if "question" in wanted else None,
        "standalone_question": turn.standalone_question if "standalone_question" in wanted else None,
        "ground_truth": turn.ground_truth if "ground_truth" in wanted else None,
        "answer": (turn.answer or "(no answer: the system failed)") if "answer" in wanted else None,
        "contexts": numbered_contexts(turn) if "contexts" in wanted else None,
    }


class RubricTurnMetric(TurnMetric[Judge]):
    spec: CustomMetricConfig

    def precheck(self, turn: Turn) -> Unscored | None:
        if "answer" in self.spec.inputs and turn.answer is None:
            return "no_answer", f"no answer: the target failed on this turn ({turn.error or 'no error recorded'})"
        if "ground_truth" in self.spec.inputs and not (turn.ground_truth or "").strip():
            return "no_ground_truth", NO_GROUND_TRUTH_NOTE
        if "contexts" in self.spec.inputs and not turn.contexts:
            return "no_contexts", "the target reported no retrieved contexts"
        return None

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        return await self.measure_in(judge, Conversation.model_construct(turns=[]), turn)

    async def measure_in(self, judge: Judge, conversation: Conversation, turn: Turn) -> Outcome:
        earlier = []
        if "conversation" in self.spec.inputs:  # the turns before this one, as the user and the system had them
            earlier = [_turn_line(t) for t in conversation.turns if t.index < turn.index]
        material = _turn_material(self.spec, turn)
        verdict = await _ask(judge, self.spec, turns=[], earlier=earlier, turn_number=turn.index + 1, **material)
        return Outcome(value_of(self.spec, verdict), verdict.reason, {"scale": self.spec.scale, **_raw(verdict)})


class RubricConversationMetric(ConversationMetric[Judge]):
    spec: CustomMetricConfig

    def precheck(self, conversation: Conversation) -> Unscored | None:
        if not any(t.answer is not None for t in conversation.turns):
            return "no_answer", "no turn was answered (the target failed on every turn)"
        return None

    async def measure(self, judge: Judge, conversation: Conversation) -> Outcome:
        turns = [{**_turn_line(t), **_turn_material(self.spec, t)} for t in conversation.turns]
        verdict = await _ask(judge, self.spec, turns=turns, earlier=[], turn_number=None, **dict.fromkeys(_MATERIAL))
        return Outcome(value_of(self.spec, verdict), verdict.reason, {"scale": self.spec.scale, **_raw(verdict)})


_MATERIAL = ("question", "standalone_question", "ground_truth", "answer", "contexts")


def _turn_line(turn: Turn) -> dict[str, Any]:
    return {"index": turn.index, "rag_input": turn.rag_input, "reply": turn.answer or "(no answer: the system failed)"}


def _raw(verdict: YesNoVerdict | RatingVerdict) -> dict[str, Any]:
    return {"verdict": verdict.verdict} if isinstance(verdict, YesNoVerdict) else {"rating": verdict.rating}


def spec_json(spec: CustomMetricConfig) -> str:
    return json.dumps(spec.model_dump(mode="json"), sort_keys=True)


def register_custom_metrics(specs: list[CustomMetricConfig]) -> list[MetricInfo]:
    """Register each declaration as a metric of this process (a later declaration of the same name replaces an
    earlier one: a sweep's cells may differ). A name taken by a built-in or a plug-in metric is a ConfigError."""
    _import_builtins()
    infos = []
    for spec in specs:
        taken = METRICS.get(spec.name) if spec.name in METRICS else None
        if taken is not None and not taken.spec:
            raise ConfigError(f"evaluation.custom_metrics: {spec.name!r} is the name of a built-in metric")
        base: type = RubricTurnMetric if spec.level == "turn" else RubricConversationMetric
        cls = type(f"Rubric_{spec.name}", (base,), {"name": spec.name, "spec": spec, "__module__": __name__})
        inputs = tuple(spec.inputs) if spec.level == "turn" else tuple(dict.fromkeys(["conversation", *spec.inputs]))
        info = MetricInfo(
            spec.name,
            spec.level,
            spec.direction,
            spec.version,
            inputs,
            "rubric",
            cls,
            default=False,
            spec=spec_json(spec),
        )
        cls.metric_info = info  # type: ignore[attr-defined]
        METRICS.add(spec.name, info, replace=True)
        infos.append(info)
    return infos
