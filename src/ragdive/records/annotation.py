"""Human ratings of simulated turns and dialogues: a line of annotations.jsonl."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from ._base import Record, utc_now


def item_id(run_id: str, conversation_id: str, turn_index: int | None = None) -> str:
    """An annotated item's stable id: the run, the conversation and (for a turn) its number counted from 1, as a
    rater reads it. A dialogue-level item has no turn part."""
    base = f"{run_id}/{conversation_id}"
    return base if turn_index is None else f"{base}/t{turn_index + 1}"


class Annotation(Record):
    """One rater's yes/no on one criterion of one item (a turn, or a whole dialogue)."""

    run_id: str
    """Run the item belongs to."""
    conversation_id: str
    """Conversation rated (or whose turn was rated)."""
    turn_index: int | None = None
    """0-based turn index; None for a dialogue-level criterion (diverse, coherent)."""
    rater: str
    """Who rated it, as written on the sheet."""
    criterion: str
    """correct, answerable, plausible, diverse, coherent, or a judge-calibration label (answer_correct...)."""
    value: bool
    """The rater's yes (True) or no (False). A blank cell is not rated and has no record."""
    conversation_finished: datetime | None = None
    """When the conversation line that was rated was finished: a resumed run that redoes a failed conversation
    makes its ratings stale, as it does its scores, and readers leave them out."""
    source: str = ""
    """File and sheet the rating was read from."""
    imported: datetime = Field(default_factory=utc_now)
    """When it was imported; a later import of the same rater, item and criterion replaces it."""

    @property
    def item_id(self) -> str:
        return item_id(self.run_id, self.conversation_id, self.turn_index)

    @property
    def key(self) -> tuple[str, str, int | None, str]:
        """The latest-line key: one rating per rater, item and criterion."""
        return (self.rater, self.conversation_id, self.turn_index, self.criterion)


class Criterion(Record):
    """A question a rater answers yes or no, with the definition printed on the sheet."""

    name: str
    level: str
    """turn or dialogue."""
    title: str
    definition: str
    checked_by: str = ""
    """Which automatic part made the same call, to compare the humans with (validator, or a judge metric)."""
    metric: str | None = None
    """The judge metric this label calibrates, for the optional answer labels."""
    optional: bool = False
    """Not one of the paper's five criteria: a label for calibrating the judge, left blank when not wanted."""


# The paper's Table 1 criteria (adapted there from Lee et al. 2024: correct, answerable, plausible per turn; diverse,
# coherent per dialogue), then two optional answer labels for judge calibration. "correct" is about the generated
# ground truth, not the RAG answer, as in the paper (section 3.3). The definitions are ours.
CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        name="correct",
        level="turn",
        title="Ground truth correct",
        definition="The ground truth is a right answer to the stand-alone question according to the source "
        "document (for a question the document cannot answer: it says so).",
        checked_by="validator (accepted the ground truth)",
    ),
    Criterion(
        name="answerable",
        level="turn",
        title="Answerable from the document",
        definition="The stand-alone question can be answered from the source document alone, without facts that "
        "only the RAG system's earlier answers brought in.",
        checked_by="validator (accepted the turn); the generator's unanswerable flag",
    ),
    Criterion(
        name="plausible",
        level="turn",
        title="Plausible user message",
        definition="A real user could have typed this message at this point of the conversation: natural wording, "
        "fits what was said before, does not mention 'the document'.",
        checked_by="validator (accepted the message)",
    ),
    Criterion(
        name="answer_correct",
        level="turn",
        title="RAG answer correct (optional)",
        definition="The RAG system's answer agrees with the ground truth (a refusal is right for a question the "
        "document cannot answer). Calibrates the judge's correctness metric.",
        checked_by="judge: correctness",
        metric="correctness",
        optional=True,
    ),
    Criterion(
        name="answer_faithful",
        level="turn",
        title="RAG answer faithful (optional)",
        definition="Every claim in the RAG system's answer is supported by its retrieved contexts. Calibrates the "
        "judge's faithfulness metric.",
        checked_by="judge: faithfulness",
        metric="faithfulness",
        optional=True,
    ),
    Criterion(
        name="diverse",
        level="dialogue",
        title="Diverse",
        definition="The user's turns do not repeat each other: each asks for something the dialogue has not "
        "covered yet.",
    ),
    Criterion(
        name="coherent",
        level="dialogue",
        title="Coherent",
        definition="The dialogue reads as one conversation: each user turn follows sensibly from what came before it.",
    ),
)


def criteria(level: str) -> list[Criterion]:
    return [c for c in CRITERIA if c.level == level]
