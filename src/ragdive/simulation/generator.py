"""The conversation generator (CG): the `user` model, playing a persona, drafts the next turn.

It sees the persona, the seed document(s) and the conversation so far including the target's last answer, so it
can react to it. A rejected draft is answered in the same chat with the validator's critique and a redraft is
asked for; unreadable output gets its own short repair message.

A model with the `base` prompt profile gets a completion-style transcript with a worked example
(prompts/base/generator.md) and a per-turn schema that quotes the documents' own sentences (base_drafts.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..models import GenerateParams, Message, Model
from ..models.prompting import transcript_messages
from ..records import Document, Persona, QuestionType, Turn, TurnDraft, Usage, Verdict
from ._prompts import history_view, render, system_prompt
from .base_drafts import draft_schema, sentences
from .checks import CHECK_DESCRIPTIONS

QuestionTypeName = Literal["initial", "follow-up", "clarification", "correction", "comparative"]


# What the user model is asked to return. Field order is the order of thought (evidence before the answer, the
# answer before the question, the stand-alone form before the conversational one): models that write JSON left to
# right, and grammar-constrained small models above all, ground their question better that way. No docstrings on
# these classes: pydantic would send them to the model as the schema's description. Bounds are the prompt's words
# (generator_system.md: "one to three quotes"; generator_turn.md: a probe's evidence is []).
EVIDENCE_QUOTES = 3


class DraftOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question_type: QuestionTypeName
    # at least one quote: a grammar-constrained model cannot skip it (an answerable turn needs evidence)
    evidence: list[str] = Field(min_length=1, max_length=EVIDENCE_QUOTES)
    ground_truth: str = Field(min_length=1)
    standalone_question: str = Field(min_length=1)
    rag_input: str = Field(min_length=1)
    refers_to_turn: int | None = None
    """1-based turn number as shown to the model (converted to the 0-based Turn index)."""

    def to_draft(self, *, unanswerable: bool) -> TurnDraft:
        refers = None if self.refers_to_turn is None else self.refers_to_turn - 1
        return TurnDraft(
            rag_input=self.rag_input.strip(),
            standalone_question=self.standalone_question.strip(),
            ground_truth=self.ground_truth.strip(),
            question_type=QuestionType(self.question_type),
            evidence=[q.strip() for q in self.evidence if q.strip()],
            refers_to_turn=refers,
            unanswerable=unanswerable,
        )


class ProbeDraftOutput(DraftOutput):
    # an unanswerable probe: there is nothing to quote
    evidence: list[str] = Field(default_factory=list, max_length=0)


class EndOrDraftOutput(BaseModel):
    # simulation.stop: satisfied, on a turn the user may end the conversation at: the decision comes first (decide,
    # then draft), and a draft is only required when the user goes on. fixed never sends this schema.
    model_config = ConfigDict(extra="ignore")

    end_reason: str | None = None
    question_type: QuestionTypeName | None = None
    evidence: list[str] | None = Field(default=None, max_length=EVIDENCE_QUOTES)
    ground_truth: str | None = None
    standalone_question: str | None = None
    rag_input: str | None = None
    refers_to_turn: int | None = None

    @model_validator(mode="after")
    def _a_draft_unless_ending(self) -> EndOrDraftOutput:
        if self.ending is None:
            try:
                DraftOutput.model_validate(self.model_dump(exclude={"end_reason"}))
            except ValidationError as exc:
                missing = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
                raise ValueError(
                    f"end_reason is null, so every other field must be filled (not valid: {', '.join(missing)})"
                ) from None
        return self

    @property
    def ending(self) -> str | None:
        """The user's reason for ending the conversation, or None to go on."""
        reason = (self.end_reason or "").strip()
        return reason or None

    def to_draft(self, *, unanswerable: bool) -> TurnDraft:
        return DraftOutput.model_validate(self.model_dump(exclude={"end_reason"})).to_draft(unanswerable=unanswerable)


@dataclass(frozen=True)
class UserEnd:
    """The simulated user ended the conversation instead of drafting a turn (simulation.stop: satisfied)."""

    reason: str


def draft_as_output_json(draft: TurnDraft) -> str:
    """A draft as the model wrote it (field order, 1-based refers_to_turn), to replay it in the redraft chat. Not
    re-validated: a rejected draft may well break the schema's rules (an empty field after stripping)."""
    data = draft.model_dump(mode="json")
    if data.get("refers_to_turn") is not None:
        data["refers_to_turn"] += 1
    return json.dumps({name: data.get(name) for name in DraftOutput.model_fields}, ensure_ascii=False, indent=1)


class Generator:
    def __init__(self, model: Model, *, history_window: int | None = None) -> None:
        self.model = model
        self.history_window = history_window

    def first_messages(
        self,
        *,
        persona: Persona,
        documents: list[Document],
        history: list[Turn],
        turn_index: int,
        probe: bool,
        shared_terms: list[str] | None = None,
        may_end: bool = False,
        instruction: str | None = None,
    ) -> list[Message]:
        """``may_end``: the user may end the conversation instead (simulation.stop: satisfied; chat profile only).
        Without it the messages are exactly those every run sent before the stop rule existed."""
        shown, omitted = history_view(history, self.history_window)
        if self.base:
            text = render(
                "base/generator.md",
                persona=persona,
                documents=documents,
                history=shown,
                omitted=omitted,
                number=turn_index + 1,
                probe=probe,
            )
            return transcript_messages(text)
        if may_end and probe:
            raise ValueError("an unanswerable probe's turn is planned: the user may not end the conversation there")
        task = render(
            "generator_turn.md",
            documents=documents,
            shared_terms=shared_terms or [],
            history=shown,
            omitted=omitted,
            number=turn_index + 1,
            probe=probe,
        )
        if instruction:  # a steered plan's instruction for this turn (simulation.plans), appended likewise
            task += "\n\n" + render("generator_steer.md", number=turn_index + 1, instruction=instruction)
        if may_end:  # appended, so the turn's own prompt (and a fixed run's cache keys) stay as they are
            task += "\n\n" + render("generator_end.md", number=turn_index + 1)
        return [
            Message(role="system", content=system_prompt("generator_system.md", persona)),
            Message(role="user", content=task),
        ]

    @property
    def base(self) -> bool:
        return self.model.prompt_profile == "base"

    async def draft(
        self,
        messages: list[Message],
        *,
        probe: bool,
        seed: int | None = None,
        documents: list[Document] | None = None,
        turn_index: int = 0,
    ) -> tuple[TurnDraft, Usage]:
        """One draft. Raises ModelOutputError when the model's answer is not a readable draft (the dialogue
        counts that as a failed attempt). The base profile's schema needs ``documents`` and ``turn_index``."""
        schema: type[BaseModel] = ProbeDraftOutput if probe else DraftOutput
        if self.base and documents is not None:
            schema = draft_schema(sentences(documents), turn_index, probe)
        completion = await self.model.generate(
            messages, schema=schema, params=GenerateParams(seed=seed) if seed is not None else None
        )
        return completion.parsed.to_draft(unanswerable=probe), completion.usage

    async def draft_or_end(
        self, messages: list[Message], *, seed: int | None = None
    ) -> tuple[TurnDraft | UserEnd, Usage]:
        """The first draft of a turn the user may end the conversation at (see first_messages' ``may_end``): a
        draft, or the user's ending. Raises ModelOutputError like ``draft``."""
        if self.base:
            raise ValueError("simulation.stop: satisfied needs a chat-profile user model")
        completion = await self.model.generate(
            messages, schema=EndOrDraftOutput, params=GenerateParams(seed=seed) if seed is not None else None
        )
        output: EndOrDraftOutput = completion.parsed
        ending = output.ending
        if ending is not None:
            return UserEnd(reason=ending), completion.usage
        return output.to_draft(unanswerable=False), completion.usage

    def redraft_messages(self, draft: TurnDraft, verdict: Verdict, turn_index: int) -> list[Message]:
        """What follows a rejected draft: the draft as the model's answer and the critique."""
        if not self.base:
            return redraft_messages(draft, verdict, turn_index)
        reason = (verdict.reason or "(no reason given)").splitlines()[0][:300]
        critique = render("base/generator_redraft.md", number=turn_index + 1, reason=reason)
        return [
            Message(role="assistant", content=_base_replay(draft, turn_index)),
            Message(role="user", content=critique),
        ]


def _base_replay(draft: TurnDraft, turn_index: int) -> str:
    """A draft as a base-profile answer looks (one line, turn 1 with its single question)."""
    data: dict[str, object] = {
        "question_type": str(draft.question_type),
        "evidence": draft.evidence,
        "ground_truth": draft.ground_truth,
    }
    if turn_index == 0:
        data["question"] = draft.rag_input
    else:
        data["standalone_question"] = draft.standalone_question
        data["rag_input"] = draft.rag_input
        data["refers_to_turn"] = None if draft.refers_to_turn is None else draft.refers_to_turn + 1
    return json.dumps(data, ensure_ascii=False, sort_keys=True)  # the key order the grammar writes


def redraft_messages(draft: TurnDraft, verdict: Verdict, turn_index: int) -> list[Message]:
    """The rejected draft (as the model's own answer) and the critique that asks for a corrected one."""
    checks = [(str(c), CHECK_DESCRIPTIONS.get(c, "")) for c in verdict.failed_checks]  # type: ignore[call-overload]
    critique = render(
        "generator_redraft.md", number=turn_index + 1, reason=verdict.reason or "(no reason given)", checks=checks
    )
    return [Message(role="assistant", content=draft_as_output_json(draft)), Message(role="user", content=critique)]


def unreadable_messages(raw: str, error: str, turn_index: int) -> list[Message]:
    """The unreadable answer and a request to answer in the required format."""
    short = error.splitlines()[0][:300]
    return [
        Message(role="assistant", content=raw[:2000] or "(empty answer)"),
        Message(role="user", content=render("generator_unreadable.md", number=turn_index + 1, error=short)),
    ]
