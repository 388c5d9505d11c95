"""Cheap deterministic checks on a draft, run before the validator LLM (a draft that fails one never costs a call).

Evidence matching: text is normalised (lower case, punctuation to spaces, whitespace collapsed). A quote is found
when its normalised form is a substring of a document, or, for quotes of ``FUZZY_MIN_WORDS`` words or more, when a
passage of the document contains at least ``threshold`` (default 0.85) of the quote's words in the same order
(difflib matching blocks over words). That tolerates a dropped or changed word in a long quote, never an
invented sentence.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

from ..records import Document, FailedCheck, QuestionType, TurnDraft

FUZZY_MIN_WORDS = 6
"""Shorter quotes must match exactly (after normalisation): fuzzy matching of a few words means nothing."""
UNANSWERABLE_TRUTH = "not in the knowledge base"

CHECK_DESCRIPTIONS: dict[FailedCheck, str] = {
    FailedCheck.RAG_INPUT_NOT_CONNECTED: "after turn 1, rag_input must read as the next message of this "
    "conversation (building on it with references, not a copy of the stand-alone question), and may only refer "
    'to things that were actually said (a change of subject marked as such, e.g. "Different question: ...", '
    "is connected too)",
    FailedCheck.NOT_STANDALONE: "standalone_question must be understandable without the conversation: every "
    "pronoun or reference resolved",
    FailedCheck.QUESTION_INCONSISTENT: "standalone_question must ask exactly what rag_input asks (identical in turn 1)",
    FailedCheck.GROUND_TRUTH_UNSUPPORTED: "ground_truth must be correct and complete according to the "
    "document(s) and supported by the evidence (for an unanswerable probe: exactly 'not in the knowledge base', "
    "and the document(s) really do not answer it)",
    FailedCheck.WRONG_TYPE: "question_type must be the type, as defined, of what the turn does (initial only in "
    "turn 1), and the turn must follow the persona's behaviour (an unanswerable probe may set it aside)",
    FailedCheck.DOCUMENT_MENTIONED: "the question must not mention the document, text, passage, article or "
    "knowledge base: a real user does not know they exist",
    FailedCheck.EVIDENCE_NOT_IN_DOCUMENT: "every evidence item must be copied word for word from the document(s)",
}

_WORDS = re.compile(r"\w+")
_DOC_NOUN = r"(?:documents?|texts?|passages?|articles?|excerpts?|knowledge base|provided material)(?!\s+of\b)"
# phrases a real user would not say: they reveal that the question was written from a document. "the text of the
# treaty" is a real question, so a noun followed by "of" never counts; "context" only counts as "given context".
_DOCUMENT_MENTION = re.compile(
    rf"\b(?:according to|based on|in|from|within|per) (?:the|this|that|these|those) "
    rf"(?:given |provided |above )?{_DOC_NOUN}"
    rf"|\b(?:the|this|that) (?:given |provided |above )?{_DOC_NOUN} (?:says|said|states|stated|mentions|mentioned|"
    rf"describes|described|claims|notes|suggests|explains|refers)\b"
    rf"|\b(?:does|do|did) (?:the|this|that) (?:given |provided )?{_DOC_NOUN} "
    rf"(?:say|mention|state|describe|tell|claim)\b"
    rf"|\b(?:the|this) (?:given|provided|above) (?:{_DOC_NOUN}|context)",
    re.IGNORECASE,
)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(_WORDS.findall(text))


@dataclass
class DocumentIndex:
    """Normalised words of the seed documents, with positions, for fast quote lookup."""

    documents: list[Document]

    @cached_property
    def texts(self) -> list[str]:
        # padded with spaces so that a quote only matches whole words ("no" is not found in "northern")
        return [f" {normalise(d.text)} " for d in self.documents]

    @cached_property
    def words(self) -> list[list[str]]:
        return [t.split() for t in self.texts]

    @cached_property
    def positions(self) -> list[dict[str, list[int]]]:
        out = []
        for words in self.words:
            where: dict[str, list[int]] = defaultdict(list)
            for i, w in enumerate(words):
                where[w].append(i)
            out.append(where)
        return out

    def contains(self, quote: str, threshold: float = 0.85) -> bool:
        q = normalise(quote)
        if not q:
            return False
        if any(f" {q} " in text for text in self.texts):
            return True
        q_words = q.split()
        if len(q_words) < FUZZY_MIN_WORDS or threshold >= 1.0:
            return False
        return any(self._fuzzy(q_words, i) >= threshold for i in range(len(self.documents)))

    def _fuzzy(self, q: list[str], doc: int) -> float:
        """Best share of the quote's words matched in order within a passage of about the quote's length. The
        passages tried are those around the quote's rarest words that occur in the document (at most 3 anchors,
        at most 20 places each), which keeps it fast on long documents."""
        words, where = self.words[doc], self.positions[doc]
        anchors = sorted({w for w in q if w in where}, key=lambda w: len(where[w]))[:3]
        best = 0.0
        for anchor in anchors:
            offset = q.index(anchor)
            for pos in where[anchor][:20]:
                start = max(0, pos - offset - 3)
                passage = words[start : pos - offset + len(q) + 3]
                matcher = difflib.SequenceMatcher(None, q, passage, autojunk=False)
                matched = sum(block.size for block in matcher.get_matching_blocks())
                best = max(best, matched / len(q))
        return best


def mentions_document(text: str) -> bool:
    return bool(_DOCUMENT_MENTION.search(text))


def deterministic_checks(
    draft: TurnDraft,
    *,
    turn_index: int,
    index: DocumentIndex,
    threshold: float = 0.85,
    previous_turns: int | None = None,
) -> list[tuple[FailedCheck, str]]:
    """Problems a draft has for certain, each with a reason the generator can act on. Empty: go on to the LLM.
    ``turn_index`` is 0-based; ``previous_turns`` (default ``turn_index``) bounds ``refers_to_turn``."""
    problems: list[tuple[FailedCheck, str]] = []
    rag, standalone = draft.rag_input.strip(), draft.standalone_question.strip()
    if not rag or not standalone:
        problems.append((FailedCheck.QUESTION_INCONSISTENT, "rag_input and standalone_question must not be empty"))
    elif turn_index == 0 and normalise(rag) != normalise(standalone):
        problems.append(
            (FailedCheck.QUESTION_INCONSISTENT, "in turn 1, standalone_question must be identical to rag_input")
        )
    elif turn_index > 0 and normalise(rag) == normalise(standalone):
        problems.append(
            (
                FailedCheck.RAG_INPUT_NOT_CONNECTED,
                "after turn 1, rag_input must be phrased as part of the conversation (refer back to what was "
                "said), not be identical to the stand-alone question",
            )
        )
    if turn_index == 0 and draft.question_type != QuestionType.INITIAL:
        problems.append((FailedCheck.WRONG_TYPE, "the first turn's question_type must be 'initial'"))
    elif turn_index > 0 and draft.question_type == QuestionType.INITIAL:
        problems.append((FailedCheck.WRONG_TYPE, "'initial' is only for turn 1; choose the type this turn has"))
    earlier = turn_index if previous_turns is None else previous_turns
    if draft.refers_to_turn is not None and not 0 <= draft.refers_to_turn < earlier:
        problems.append(
            (FailedCheck.RAG_INPUT_NOT_CONNECTED, "refers_to_turn must name an earlier turn of this conversation")
        )
    for field, text in (("rag_input", rag), ("standalone_question", standalone)):
        if mentions_document(text):
            problems.append((FailedCheck.DOCUMENT_MENTIONED, f"{field} mentions the document/text: {text!r}"))
            break
    if draft.unanswerable:
        if normalise(draft.ground_truth) != normalise(UNANSWERABLE_TRUTH):
            problems.append(
                (
                    FailedCheck.GROUND_TRUTH_UNSUPPORTED,
                    f"this is an unanswerable probe: ground_truth must be exactly '{UNANSWERABLE_TRUTH}'",
                )
            )
    else:
        if not draft.ground_truth.strip():
            problems.append((FailedCheck.GROUND_TRUTH_UNSUPPORTED, "ground_truth is empty"))
        if not [q for q in draft.evidence if q.strip()]:
            problems.append(
                (FailedCheck.GROUND_TRUTH_UNSUPPORTED, "no evidence: quote the sentence(s) that support the answer")
            )
    missing = [q for q in draft.evidence if q.strip() and not index.contains(q, threshold)]
    if missing:
        shown = "; ".join(repr(q[:120]) for q in missing[:3])
        problems.append(
            (FailedCheck.EVIDENCE_NOT_IN_DOCUMENT, f"these evidence quotes do not occur in the document(s): {shown}")
        )
    return problems
