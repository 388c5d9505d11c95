"""Citation precision and recall, for targets that cite their passages: a ``citations`` field in the reply
(``target.citations_path``; Turn.citations) or, when the target has none, ``[n]`` markers in the answer mapped
onto the returned contexts by rank (``[2]`` = the second context; ``[1, 3]`` and ``[1][3]`` cite both).

One judge call per turn, shared by the two: the answer's sentences, each with the passages cited for it, and the
judge says for each sentence whether it states a claim that needs a citation and which of its cited passages
support it.

- ``citation_precision``: cited (sentence, passage) pairs whose passage supports the sentence ÷ cited pairs. A
  citation of a passage the target did not return counts as unsupported.
- ``citation_recall``: sentences with a claim that carry a supporting citation ÷ sentences with a claim.

Both are unscored with the reason when the target gave no citations (neither the field nor a marker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from ....records import Conversation, Turn
from ...judge import Judge
from ..base import Outcome, TurnMetric, Unscorable, numbered_contexts
from ..registry import metric
from ..shared import shared_verdict

MARKER = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NO_CITATIONS = "the target gave no citations (no citations field and no [n] markers in the answer)"


@dataclass
class CitedSentence:
    number: int
    text: str
    """Without its markers."""
    cited: list[int] = field(default_factory=list)
    shown: str = ""
    """As the judge sees it: with its markers in place, so it sees which part each passage is cited for."""


def cited_sentences(turn: Turn) -> list[CitedSentence]:
    """The answer's sentences with the context ranks cited for each (markers removed from the text)."""
    answer = turn.answer or ""
    if turn.citations is not None:
        return _from_field(turn, answer)
    sentences: list[CitedSentence] = []
    for raw in _SENTENCE_END.split(answer.strip()):
        leading = re.match(r"^(\s*\[\d+(?:\s*[,;]\s*\d+)*\]\s*)+", raw)
        if leading and sentences:  # "... fact. [2] Next": the marker belongs to the sentence before it
            sentences[-1].cited += _ranks(leading.group(0))
            sentences[-1].shown += " " + leading.group(0).strip()
            raw = raw[leading.end() :]
        text = MARKER.sub("", raw).strip()
        if text:
            clean = re.sub(r"\s+([.,;!?])", r"\1", text)
            sentences.append(CitedSentence(len(sentences) + 1, clean, _ranks(raw), raw.strip()))
    return sentences


def _ranks(text: str) -> list[int]:
    return [int(n) for group in MARKER.findall(text) for n in re.split(r"\s*[,;]\s*", group)]


def _from_field(turn: Turn, answer: str) -> list[CitedSentence]:
    """Field citations: each to the sentence it names (found in the answer, else shown as given), or to the whole
    answer when it names none."""
    units: dict[str, CitedSentence] = {}
    for c in turn.citations or []:
        text = (c.sentence or answer).strip()
        unit = units.setdefault(text, CitedSentence(len(units) + 1, text, shown=text))
        unit.cited.append(c.context)
    return list(units.values())


class SentenceVerdict(BaseModel):
    sentence: int
    reason: str = ""
    claim: bool
    """The sentence states a fact that should be backed by a passage."""
    supported_by: list[int] = Field(default_factory=list)
    """Those of its cited passages that support it."""


class CitationVerdict(BaseModel):
    sentences: list[SentenceVerdict]


@dataclass
class _Judged:
    sentences: list[CitedSentence]
    verdicts: dict[int, SentenceVerdict]
    out_of_range: int


async def _judged(judge: Judge, conversation: Conversation, turn: Turn) -> _Judged:
    sentences = cited_sentences(turn)
    if not any(s.cited for s in sentences):
        raise Unscorable(NO_CITATIONS)
    k = len(turn.contexts)
    shown = [{"number": s.number, "text": s.shown, "cited": [r for r in s.cited if 1 <= r <= k]} for s in sentences]

    async def ask() -> CitationVerdict:
        return await judge.ask(
            "citations", CitationVerdict, question=turn.rag_input, sentences=shown, contexts=numbered_contexts(turn)
        )

    key = ("citations", conversation.id, turn.index, turn.answer or "")
    verdict = await shared_verdict(judge, key, ask)
    verdicts = {v.sentence: v for v in verdict.sentences}
    missing = [s.number for s in sentences if s.number not in verdicts]
    if missing:
        raise Unscorable(f"the judge gave no verdict on sentence(s) {missing}", judge_failed=True)
    out_of_range = sum(1 for s in sentences for r in s.cited if not 1 <= r <= k)
    return _Judged(sentences, verdicts, out_of_range)


def _details(judged: _Judged) -> dict[str, Any]:
    return {
        "sentences": [
            {"sentence": s.text, "cited": s.cited, **judged.verdicts[s.number].model_dump(exclude={"sentence"})}
            for s in judged.sentences
        ]
    }


def _supporting(judged: _Judged, s: CitedSentence) -> set[int]:
    return set(judged.verdicts[s.number].supported_by) & set(s.cited)


class _CitationMetric(TurnMetric):
    needs_contexts = False  # a citation of a passage that was never returned is still a (wrong) citation

    async def measure(self, judge: Judge, turn: Turn) -> Outcome:
        return await self.measure_in(judge, Conversation(id="", persona="", document_ids=[], seed=0), turn)


# version 2 of both: sentences shown with their markers in place (a capable-model check found a sentence citing
# two passages for two clauses judged against each passage whole)
@metric(
    "citation_precision",
    version=2,
    kind="turn",
    inputs=("question", "answer", "contexts"),
    prompt="citations",
    default=False,
)
class CitationPrecision(_CitationMetric):
    async def measure_in(self, judge: Judge, conversation: Conversation, turn: Turn) -> Outcome:
        judged = await _judged(judge, conversation, turn)
        pairs = sum(len(set(s.cited)) for s in judged.sentences)
        good = sum(len(_supporting(judged, s)) for s in judged.sentences)
        reason = f"{good} of {pairs} cited passages support their sentence"
        if judged.out_of_range:
            reason += f"; {judged.out_of_range} citation(s) of a passage the target did not return"
        return Outcome(good / pairs, reason, _details(judged))


@metric(
    "citation_recall",
    version=2,
    kind="turn",
    inputs=("question", "answer", "contexts"),
    prompt="citations",
    default=False,
)
class CitationRecall(_CitationMetric):
    async def measure_in(self, judge: Judge, conversation: Conversation, turn: Turn) -> Outcome:
        judged = await _judged(judge, conversation, turn)
        claims = [s for s in judged.sentences if judged.verdicts[s.number].claim]
        if not claims:
            raise Unscorable("no sentence of the answer states a claim that needs a citation")
        backed = [s for s in claims if _supporting(judged, s)]
        reason = f"{len(backed)} of {len(claims)} sentences with a claim carry a supporting citation"
        bare = [s.text for s in claims if not _supporting(judged, s)]
        if bare:
            reason += "; without: " + "; ".join(t[:80] for t in bare[:3])
        return Outcome(len(backed) / len(claims), reason, _details(judged))
