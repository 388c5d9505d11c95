"""The conversation generator (CG): the `user` model, playing a persona, drafts the next turn.

It sees the persona, the seed document(s) and the conversation so far including the target's last answer, so it
can react to it. A rejected draft is answered in the same chat with the validator's critique and a redraft is
asked for; unreadable output gets its own short repair message.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..models import GenerateParams, Message, Model
from ..records import Document, Persona, QuestionType, Turn, TurnDraft, Usage, Verdict
from ._prompts import history_view, render
from .checks import CHECK_DESCRIPTIONS

QuestionTypeName = Literal["initial", "follow-up", "clarification", "correction", "comparative"]


class DraftOutput(BaseModel):
    """What the user model is asked to return. Field order is the order of thought (evidence before the answer,
    the answer before the question, the stand-alone form before the conversational one): models that write JSON
    left to right, and grammar-constrained small models above all, ground their question better that way."""

    model_config = ConfigDict(extra="ignore")

    question_type: QuestionTypeName
    evidence: list[str] = Field(min_length=1, max_length=5)
    """At least one quote: a grammar-constrained model cannot skip it (an answerable turn needs evidence)."""
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
    """An unanswerable probe: there is nothing to quote."""

    evidence: list[str] = Field(default_factory=list, max_length=5)


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
    ) -> list[Message]:
        shown, omitted = history_view(history, self.history_window)
        return [
            Message(role="system", content=render("generator_system.md", persona=persona)),
            Message(
                role="user",
                content=render(
                    "generator_turn.md",
                    documents=documents,
                    shared_terms=shared_terms or [],
                    history=shown,
                    omitted=omitted,
                    number=turn_index + 1,
                    probe=probe,
                ),
            ),
        ]

    async def draft(self, messages: list[Message], *, probe: bool, seed: int | None = None) -> tuple[TurnDraft, Usage]:
        """One draft. Raises ModelOutputError when the model's answer is not a readable draft (the dialogue
        counts that as a failed attempt)."""
        completion = await self.model.generate(
            messages,
            schema=ProbeDraftOutput if probe else DraftOutput,
            params=GenerateParams(seed=seed) if seed is not None else None,
        )
        output: DraftOutput = completion.parsed
        return output.to_draft(unanswerable=probe), completion.usage


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
