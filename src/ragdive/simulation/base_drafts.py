"""The draft schemas of the base prompt profile: what a base model may write, decided per turn.

A base model cannot follow "copy the evidence word for word" or "turn 1 is initial"; a grammar can make it. So
the schema compiled into the grammar carries those rules itself:
- evidence is an enum of the seed documents' own sentences, so every quote is copied (it still goes through the
  deterministic evidence check like any draft);
- question_type is `initial` in turn 1 and any other type after it; refers_to_turn is null or an earlier turn;
- turn 1 has a single `question` (the message and its stand-alone form are identical in turn 1 by definition);
- an unanswerable probe has no evidence and exactly the probe's ground truth;
- every free-text field is short, so the answer fits in the token budget and is never cut off mid-JSON.
The deterministic checks and the validator judge the resulting draft exactly as they judge a chat-profile draft.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..models.profiles import short_text
from ..records import SIMULATED_TYPES, Document, QuestionType, TurnDraft
from .checks import UNANSWERABLE_TRUTH

MAX_SENTENCES = 40
"""Sentences offered as evidence (the first ones of the documents): bounds the grammar's size."""
SENTENCE_CHARS = 240
"""A longer sentence is offered cut at a word boundary (still a verbatim piece of the document)."""
QUESTION_CHARS = 120
ANSWER_CHARS = 150

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(documents: list[Document]) -> tuple[str, ...]:
    """The documents' sentences: paragraphs rejoined (line breaks inside a paragraph are not sentence ends),
    markdown headings left out, at most ``MAX_SENTENCES``."""
    out: list[str] = []
    for doc in documents:
        for paragraph in re.split(r"\n\s*\n", doc.text):
            lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
            text = " ".join(line for line in lines if not line.startswith("#"))
            for sentence in _SENTENCE_END.split(text):
                sentence = sentence.strip()
                if len(sentence.split()) < 3:
                    continue
                if len(sentence) > SENTENCE_CHARS:
                    sentence = sentence[:SENTENCE_CHARS].rsplit(" ", 1)[0]
                if sentence not in out:
                    out.append(sentence)
    return tuple(out[:MAX_SENTENCES])


class _BaseDraft(BaseModel):
    model_config = ConfigDict(extra="ignore")

    def to_draft(self, *, unanswerable: bool) -> TurnDraft:
        data: dict[str, Any] = self.model_dump()
        question = data.pop("question", None)
        if question is not None:  # turn 1: the message is its own stand-alone form
            data["rag_input"] = data["standalone_question"] = question
        refers = data.get("refers_to_turn")
        return TurnDraft(
            rag_input=data["rag_input"].strip(),
            standalone_question=data["standalone_question"].strip(),
            ground_truth=data["ground_truth"].strip(),
            question_type=QuestionType(data["question_type"]),
            evidence=[q.strip() for q in data.get("evidence", []) if q.strip()],
            refers_to_turn=None if refers is None else refers - 1,
            unanswerable=unanswerable,
        )


def _text(limit: int) -> Any:
    return (short_text(limit, min_chars=1), ...)


@lru_cache(maxsize=64)
def draft_schema(quotes: tuple[str, ...], turn_index: int, probe: bool) -> type[BaseModel]:
    """The schema of one turn's draft (see the module doc). ``turn_index`` is 0-based."""
    later = [t.value for t in SIMULATED_TYPES if t is not QuestionType.INITIAL]
    fields: dict[str, Any] = {
        "question_type": (Literal["initial"] if turn_index == 0 else Literal[tuple(later)], ...),  # type: ignore[valid-type]
    }
    if probe:
        fields["evidence"] = (list[str], Field(max_length=0))
        fields["ground_truth"] = (Literal[UNANSWERABLE_TRUTH], ...)
    else:
        quote = Literal[quotes] if quotes else str  # type: ignore[valid-type]
        fields["evidence"] = (list[quote], Field(min_length=1, max_length=2))  # type: ignore[valid-type]
        fields["ground_truth"] = _text(ANSWER_CHARS)
    if turn_index == 0:
        fields["question"] = _text(QUESTION_CHARS)
    else:
        fields["standalone_question"] = _text(QUESTION_CHARS)
        fields["rag_input"] = _text(QUESTION_CHARS)
        earlier = tuple(range(1, turn_index + 1))
        fields["refers_to_turn"] = (Literal[earlier] | None, ...)  # type: ignore[valid-type]
    name = f"BaseDraftTurn{turn_index + 1}{'Probe' if probe else ''}"
    model: type[BaseModel] = create_model(name, __base__=_BaseDraft, **fields)  # type: ignore[call-overload]
    return model
