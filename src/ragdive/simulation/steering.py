"""Steered conversations: a plan fixes some turns of a conversation and the simulated user plays the rest.

A plans file (``simulation.plans``: YAML, a list of plans or ``{plans: [...]}``; or JSONL, one plan a line) holds
plans, each for the conversations on given seed documents (``documents: [id, ...]``, the conversation's seed
document ids in any order) or, without ``documents``, for every other conversation. A plan is

- ``prefix``: real messages the conversation starts from (``role`` user/assistant, ``content``, and for an
  assistant message the ``contexts`` it was given, when known). Each user message and the answer after it become
  one turn, recorded as given and never sent to the target (it is told them as history);
- then ``script``: one item per turn. A fixed turn (``rag_input``, optional ``standalone_question`` (default: the
  rag_input), ``ground_truth``, ``type``, ``evidence``, ``unanswerable``) is sent to the target as written; with a
  ground truth it is first checked by the validator like a draft, and a rejection is recorded but never changes
  the turn (it is marked validator_overruled). ``simulate`` (or ``{simulate: "correct the assistant"}``) is a turn
  the simulated user drafts, optionally with that instruction, with the full per-turn references of any drafted
  turn.

Turns after the plan's steps, up to max_turns, are simulated. The unanswerable-probe draw is made for every turn
as in an unsteered run (and ignored on a fixed or prefix turn), so the other turns' probes stay where they were.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError
from ..records import Context, QuestionType, TurnDraft

SIMULATE = "simulate"


class FixedTurnSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rag_input: str = Field(min_length=1)
    """The message sent to the target."""
    standalone_question: str | None = None
    """The same question, self-contained (default: rag_input)."""
    ground_truth: str | None = None
    """The answer; with one the validator checks the turn like a draft. Without one the GT metrics are unscored."""
    type: QuestionType | None = None
    """The question type (default: initial for turn 1, follow-up after it)."""
    evidence: list[str] = Field(default_factory=list)
    unanswerable: bool = False


class SimulateSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    simulate: str | None = None
    """An instruction for the simulated user on this turn ("correct the assistant", "switch topic")."""


class PrefixMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str
    contexts: list[Context | str] = Field(default_factory=list)
    """The passages the assistant was given for this answer, when known (text, or records with text/source)."""


class PlanSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[str] | None = None
    """The seed document ids of the conversations it is for; None: every conversation without a plan of its own."""
    prefix: list[PrefixMessage] = Field(default_factory=list)
    script: list[FixedTurnSpec | SimulateSpec | Literal["simulate"]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _alternating_prefix(self) -> PlanSpec:
        roles = [m.role for m in self.prefix]
        if any(role != ("user" if i % 2 == 0 else "assistant") for i, role in enumerate(roles)) or len(roles) % 2:
            raise ValueError("prefix: user and assistant messages must alternate, from a user message to an answer")
        return self


@dataclass(frozen=True)
class Step:
    """One planned turn: fixed (sent as written), prefix (recorded as given) or simulate (drafted)."""

    kind: Literal["fixed", "prefix", "simulate"]
    draft: TurnDraft | None = None
    answer: str | None = None
    contexts: list[Context] = field(default_factory=list)
    instruction: str | None = None


def steps_of(plan: PlanSpec) -> list[Step]:
    steps: list[Step] = []
    for user, assistant in zip(plan.prefix[::2], plan.prefix[1::2], strict=True):
        draft = TurnDraft(
            rag_input=user.content,
            standalone_question=user.content,
            ground_truth="",  # a real conversation's answer is not a reference: GT metrics are unscored
            question_type=QuestionType.UNKNOWN,
        )
        contexts = [c if isinstance(c, Context) else Context(text=c) for c in assistant.contexts]
        steps.append(Step("prefix", draft=draft, answer=assistant.content, contexts=contexts))
    for item in plan.script:
        if isinstance(item, FixedTurnSpec):
            first = not steps
            kind = item.type or (QuestionType.INITIAL if first else QuestionType.FOLLOW_UP)
            draft = TurnDraft(
                rag_input=item.rag_input,
                standalone_question=item.standalone_question or item.rag_input,
                ground_truth=item.ground_truth or "",
                question_type=kind,
                evidence=item.evidence,
                unanswerable=item.unanswerable,
            )
            steps.append(Step("fixed", draft=draft))
        else:
            instruction = item.simulate if isinstance(item, SimulateSpec) else None
            steps.append(Step("simulate", instruction=instruction))
    return steps


@dataclass(frozen=True)
class Plans:
    """The plans of a run: per seed-document set, and the one for all others."""

    by_documents: dict[frozenset[str], list[Step]]
    default: list[Step] | None

    def for_documents(self, document_ids: list[str]) -> list[Step]:
        return self.by_documents.get(frozenset(document_ids), self.default or [])

    @property
    def longest(self) -> int:
        return max([len(s) for s in self.by_documents.values()] + [len(self.default or [])])


def load_plans(path: str | Path) -> Plans:
    """Read a plans file (YAML or JSONL). Bad input is one ConfigError naming the file and the plan."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"simulation.plans: {source} does not exist")
    text = source.read_text(encoding="utf-8")
    raw: Any
    try:
        if source.suffix == ".jsonl":
            raw = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            raw = yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"simulation.plans: {source} is not readable: {str(exc).splitlines()[0]}") from None
    if isinstance(raw, dict):
        raw = raw.get("plans", [raw])
    if not isinstance(raw, list):
        raise ConfigError(f"simulation.plans: {source} must hold a list of plans")
    by_documents: dict[frozenset[str], list[Step]] = {}
    default: list[Step] | None = None
    for number, item in enumerate(raw, 1):
        try:
            plan = PlanSpec.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"simulation.plans: {source}: plan {number}: {where}: {first['msg']}") from None
        key = None if plan.documents is None else frozenset(plan.documents)
        if (key is None and default is not None) or (key is not None and key in by_documents):
            raise ConfigError(f"simulation.plans: {source}: plan {number} repeats the documents of an earlier plan")
        if key is None:
            default = steps_of(plan)
        else:
            by_documents[key] = steps_of(plan)
    return Plans(by_documents, default)
