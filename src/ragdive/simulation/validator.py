"""The conversation validator (CV): deterministic checks first, then the `validator` model.

A draft that fails a deterministic check is rejected without an LLM call. Otherwise the validator model returns
reason, failed_checks and valid (in that order: reason first, so the decision follows the reasoning). A model
answer that lists failed checks while saying valid is treated as a rejection: the listed problems are specific,
the flag is not. An unreadable validator answer rejects the draft too (it is not accepted unchecked), with the
reason saying so and no category.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import BudgetExceeded, ModelOutputError
from ..models import GenerateParams, Message, Model
from ..models.profiles import bounded_schema
from ..models.prompting import transcript_messages
from ..records import Document, FailedCheck, Persona, Turn, TurnDraft, Usage, Verdict
from ._prompts import history_view, render, system_prompt
from .checks import CHECK_DESCRIPTIONS, DocumentIndex, deterministic_checks

CheckName = Literal[
    "rag_input_not_connected",
    "not_standalone",
    "question_inconsistent",
    "ground_truth_unsupported",
    "wrong_type",
    "document_mentioned",
    "evidence_not_in_document",
]
# every category but "other" (imported rejections only) is one the validator model may name
assert set(CheckName.__args__) == {c.value for c in FailedCheck} - {"other"}  # type: ignore[attr-defined]


class VerdictOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str
    failed_checks: list[CheckName] = Field(default_factory=list, max_length=7)
    valid: bool


class Validator:
    def __init__(self, model: Model, *, history_window: int | None = None, evidence_threshold: float = 0.85) -> None:
        self.model = model
        self.history_window = history_window
        self.evidence_threshold = evidence_threshold

    async def check(
        self,
        draft: TurnDraft,
        *,
        turn_index: int,
        persona: Persona,
        documents: list[Document],
        history: list[Turn],
        index: DocumentIndex | None = None,
        seed: int | None = None,
        instruction: str | None = None,
    ) -> tuple[Verdict, Usage | None]:
        """The verdict on one draft and the validator model's usage (None when no model call was made).
        ``instruction``: a steered plan's instruction for this turn, which the validator is told (else it would
        reject, as off-persona, a turn doing what the plan asked, and the redraft would drop the instruction)."""
        index = index or DocumentIndex(documents)
        problems = deterministic_checks(
            draft, turn_index=turn_index, index=index, threshold=self.evidence_threshold, previous_turns=len(history)
        )
        if problems:
            categories = list(dict.fromkeys(check for check, _ in problems))
            reason = "; ".join(message for _, message in problems)
            return Verdict(valid=False, reason=reason, failed_checks=categories, checked_by="deterministic"), None

        messages = self.messages(
            draft, turn_index=turn_index, persona=persona, documents=documents, history=history, instruction=instruction
        )
        base = self.model.prompt_profile == "base"
        try:
            completion = await self.model.generate(
                messages,
                schema=bounded_schema(VerdictOutput) if base else VerdictOutput,
                params=GenerateParams(seed=seed) if seed is not None else None,
            )
        except BudgetExceeded:
            raise
        except ModelOutputError as exc:
            reason = f"the validator's answer could not be read, so the draft was not accepted: {exc}"
            return Verdict(valid=False, reason=reason.splitlines()[0][:500], checked_by="llm"), None
        output: VerdictOutput = completion.parsed
        failed = [FailedCheck(c) for c in dict.fromkeys(output.failed_checks)]
        valid = output.valid and not failed
        reason = output.reason.strip()
        if output.valid and failed:
            reason = f"{reason} (listed failed checks, so not accepted)".strip()
        return Verdict(valid=valid, reason=reason, failed_checks=failed, checked_by="llm"), completion.usage

    def messages(
        self,
        draft: TurnDraft,
        *,
        turn_index: int,
        persona: Persona,
        documents: list[Document],
        history: list[Turn],
        instruction: str | None = None,
    ) -> list[Message]:
        shown, omitted = history_view(history, self.history_window)
        if self.model.prompt_profile == "base":
            return transcript_messages(render("base/validator.md", draft=draft, history=shown))
        data = draft.model_dump(mode="json", exclude={"unanswerable"})
        if data.get("refers_to_turn") is not None:
            data["refers_to_turn"] += 1  # the models see 1-based turn numbers
        checks = [(str(c), d) for c, d in CHECK_DESCRIPTIONS.items()]
        return [
            Message(role="system", content=system_prompt("validator_system.md", persona, checks)),
            Message(
                role="user",
                content=render(
                    "validator_user.md",
                    documents=documents,
                    history=shown,
                    omitted=omitted,
                    number=turn_index + 1,
                    probe=draft.unanswerable,
                    instruction=instruction,
                    draft_json=json.dumps(data, ensure_ascii=False, indent=1),
                ),
            ),
        ]
