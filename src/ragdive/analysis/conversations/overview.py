"""Every conversation analysis of one or more runs at once, optionally per persona, and its plain-data form.

This is what `ragdive analyze` prints and what a report should show, so both read the same numbers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...records import Conversation, Rejection, Score
from .curves import CurvePoint, metric_curves
from .flow import Flow, question_flow
from .lapses import LapseStats, lapse_stats
from .lengths import Lengths, conversation_lengths
from .rejections import RejectionStats, rejection_stats
from .uniqueness import DEFAULT_THRESHOLD, Embedder, PairJudge, Uniqueness, question_uniqueness

ALL = "all"
"""Name of the group that holds every conversation."""


@dataclass
class RunRecords:
    """What the analyses read from one run directory (the current lines of each file)."""

    name: str
    conversations: list[Conversation]
    rejections: list[Rejection] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)

    def only(self, keep: set[str]) -> RunRecords:
        """The same run restricted to the conversations with these ids (and their rejections and scores)."""
        return RunRecords(
            self.name,
            [c for c in self.conversations if c.id in keep],
            [r for r in self.rejections if r.conversation_id in keep],
            [s for s in self.scores if s.conversation_id in keep],
        )


@dataclass(frozen=True)
class ConversationAnalysis:
    conversations: int
    flow: Flow
    uniqueness: Uniqueness
    rejections: RejectionStats
    lapses: dict[str, LapseStats]
    curves: dict[str, list[CurvePoint]]
    uniqueness_judge: Uniqueness | None = None
    """The LLM-judge method's result, next to the embedding (or exact) one, when a pair judge was given."""
    lengths: Lengths | None = None
    """Turns per conversation and what stopped each (simulation.stop)."""


def analyse(
    runs: Sequence[RunRecords],
    embed: Embedder | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    judge_pairs: PairJudge | None = None,
) -> ConversationAnalysis:
    """Pool the runs: several runs of one plan are repeats (uniqueness compares them), and the other analyses
    count their conversations together."""
    conversations = [c for r in runs for c in r.conversations]
    scores = [s for r in runs for s in r.scores]
    # the same conversation id in two runs is two conversations (repeats reuse the plan's ids)
    clusters: list[Hashable] = [(i, s.conversation_id) for i, r in enumerate(runs) for s in r.scores]
    return ConversationAnalysis(
        conversations=len(conversations),
        flow=question_flow(conversations),
        uniqueness=question_uniqueness(conversations, embed, threshold=threshold),
        rejections=rejection_stats(conversations, [x for r in runs for x in r.rejections]),
        lapses=lapse_stats(scores),
        curves=metric_curves(scores, clusters),
        uniqueness_judge=question_uniqueness(conversations, judge_pairs=judge_pairs) if judge_pairs else None,
        lengths=conversation_lengths(conversations),
    )


def analyse_groups(
    runs: Sequence[RunRecords],
    embed: Embedder | None = None,
    *,
    by: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    judge_pairs: PairJudge | None = None,
) -> dict[str, ConversationAnalysis]:
    """{"all": analysis} and, with ``by="persona"``, one more entry per persona (sorted by name)."""
    out = {ALL: analyse(runs, embed, threshold=threshold, judge_pairs=judge_pairs)}
    if by is None:
        return out
    if by != "persona":
        raise ValueError(f"cannot group conversations by {by!r}; use persona")
    personas = sorted({c.persona for r in runs for c in r.conversations})
    for persona in personas:
        subset = [r.only({c.id for c in r.conversations if c.persona == persona}) for r in runs]
        out[persona] = analyse(subset, embed, threshold=threshold, judge_pairs=judge_pairs)
    return out


def to_data(value: Any) -> Any:
    """Plain JSON-ready data: dataclasses become dicts, tuples lists, keys strings; NaN never appears (None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_data(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted path, leaf value) pairs of plain data, in order: the long form `--csv` writes."""
    if isinstance(data, dict):
        return [row for k, v in data.items() for row in flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(data, list):
        return [row for i, v in enumerate(data) for row in flatten(v, f"{prefix}[{i}]")]
    return [(prefix, data)]
