"""Per-metric summaries of a run: mean of scored items, n scored, n unscored; by turn, question type, persona.

Unscored items never enter a mean; they are counted (and their reasons tallied) next to it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import Conversation, RoleSetup, Score, kind_of_unscored
from ..store import CONVERSATIONS, EVALUATIONS, RunStore
from .bootstrap import cluster_bootstrap_ci, cluster_bootstrap_cis


@dataclass
class RunScores:
    """One run's conversations and scores, as read from its directory."""

    name: str
    conversations: list[Conversation]
    scores: list[Score]
    kind: str = "dynamic"
    run_id: str = ""
    source_run: str | None = None
    """The run a replay sent the user messages of (None for other kinds)."""
    config: dict[str, Any] = field(default_factory=dict)
    """The run's stored config (pass thresholds for pass^k are read from it)."""
    roles: dict[str, RoleSetup] = field(default_factory=dict)
    """Each role's model, parameters and prompt fingerprint, as the manifest recorded them (empty: not recorded)."""
    left_out: int = 0
    """Whole-conversation scores of conversations in error, kept out of every mean (``from_store``)."""

    @classmethod
    def from_store(cls, store: RunStore) -> RunScores:
        """The run's current conversations and scores. A conversation in ``error`` did not finish: its
        whole-conversation scores (forgetfulness of a cut dialogue) are left out of the means and counted apart;
        the scores of its answered turns stay."""
        manifest = store.read_manifest()
        conversations, kept, left_out = _current_records(store)
        return cls(
            name=manifest.name or manifest.run_id,
            conversations=conversations,
            scores=kept,
            kind=manifest.kind,
            run_id=manifest.run_id,
            source_run=manifest.source_run,
            config=manifest.config,
            roles=dict(manifest.roles),
            left_out=left_out,
        )

    @property
    def lower_is_better(self) -> frozenset[str]:
        """The run's custom (YAML rubric) metrics declared lower-is-better: the registry knows the built-ins', a
        run's own declarations travel with it in its manifest."""
        return custom_lower_is_better(self.config)

    def metrics(self) -> list[str]:
        """The metrics scored, per-turn ones first, each group by name: the order scores are written in depends on
        which judge call answers first (turns are judged while later ones are still being simulated), and every
        table and summary must come out the same for the same scores."""
        conversation_level = {s.metric: s.turn_index is None for s in self.scores}
        return sorted(conversation_level, key=lambda m: (conversation_level[m], m))


_last_read: tuple[Hashable, tuple[list[Conversation], list[Score], int]] | None = None
"""The records of the last run read, and the state of its files then: the end of a run reads them for its
alarms, its summary and its report, one after another (each read parsed every line again: 3 s at 2,000 x 5)."""


def _current_records(store: RunStore) -> tuple[list[Conversation], list[Score], int]:
    """The current conversations, their scores but the whole-conversation ones of conversations in error, and how
    many of those were left out; read again only when a file changed since the last read."""
    global _last_read
    state = (store.path.resolve(), *(_file_state(store.path / name) for name in (CONVERSATIONS, EVALUATIONS)))
    if _last_read is not None and _last_read[0] == state:
        conversations, kept, left_out = _last_read[1]
        return list(conversations), list(kept), left_out  # a reader may change its lists, never the next one's
    conversations = store.current_conversations()
    cut = {c.id for c in conversations if c.status == "error"}
    scores = store.current_scores()
    kept = [s for s in scores if not (s.turn_index is None and s.conversation_id in cut)]
    _last_read = (state, (list(conversations), list(kept), len(scores) - len(kept)))
    return conversations, kept, len(scores) - len(kept)


def _file_state(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


@dataclass
class MetricSummary:
    metric: str
    mean: float | None
    n_scored: int
    n_unscored: int
    ci: tuple[float, float] | None = None
    unscored_reasons: Counter[str] = field(default_factory=Counter)
    """Unscored items by kind (records.UNSCORED_KINDS), most common first with ``most_common()``."""


def summarize_scores(
    metric: str, scores: Iterable[Score], *, cluster: Callable[[Score], Hashable] | None = None, seed: int = 0
) -> MetricSummary:
    """Mean of the scored values, counts, and (with ``cluster``) a clustered bootstrap 95 % CI."""
    summary, values, scored = _summary_without_ci(metric, scores)
    if cluster is not None and values:
        summary.ci = cluster_bootstrap_ci(values, [cluster(s) for s in scored], seed=seed)
    return summary


def _summarize_clustered(groups: list[tuple[str, Iterable[Score]]], seed: int = 0) -> list[MetricSummary]:
    """``summarize_scores(metric, scores, cluster=by_conversation)`` of each group, their CIs computed together so
    that groups with as many conversations share their resampled indices (cluster_bootstrap_cis)."""
    done = [_summary_without_ci(metric, scores) for metric, scores in groups]
    wanted = [(summary, values, scored) for summary, values, scored in done if values]
    samples = [(values, [by_conversation(s) for s in scored]) for _, values, scored in wanted]
    for (summary, _, _), ci in zip(wanted, cluster_bootstrap_cis(samples, seed=seed), strict=True):
        summary.ci = ci
    return [summary for summary, _, _ in done]


def _summary_without_ci(metric: str, scores: Iterable[Score]) -> tuple[MetricSummary, list[float], list[Score]]:
    """The summary but its CI, with the scored values and their scores (for the CI)."""
    items = list(scores)
    scored = [s for s in items if s.value is not None]
    unscored = [s for s in items if s.value is None]
    values = [float(s.value) for s in scored]  # type: ignore[arg-type]
    # grouped by the stable kind code, never by free text (every judge failure words itself differently)
    reasons = Counter(kind_of_unscored(s) or "other" for s in unscored)
    return MetricSummary(metric, exact_mean(values), len(scored), len(unscored), None, reasons), values, scored


def exact_mean(values: list[float]) -> float | None:
    """The mean from an exactly rounded sum (math.fsum): the same scores in any order give the same bits, so a
    table rule comparing means (a band's `*`, an arrow) cannot flip with the order of a file's lines (after a
    kill and resume, or a shuffle); np.mean's pairwise sum differs in the last bits with the order."""
    return math.fsum(values) / len(values) if values else None


def by_conversation(score: Score) -> str:
    return score.conversation_id


def summarize_run(run: RunScores, metrics: list[str] | None = None) -> list[MetricSummary]:
    """One summary per metric with a CI clustered by conversation."""
    wanted = metrics or run.metrics()
    by_metric: dict[str, list[Score]] = defaultdict(list)
    for s in run.scores:
        by_metric[s.metric].append(s)
    return _summarize_clustered([(m, by_metric.get(m, [])) for m in wanted])


def _turn_lookup(run: RunScores) -> dict[tuple[str, int], tuple[str, bool]]:
    return {(c.id, t.index): (str(t.question_type), bool(t.unanswerable)) for c in run.conversations for t in c.turns}


def summarize_by(run: RunScores, by: str, metrics: list[str] | None = None) -> dict[str, dict[str, MetricSummary]]:
    """{metric: {group: summary}} grouped by "turn" (index), "question_type" or "persona". Whole-conversation
    metrics have no turn or question type and appear only when grouping by persona."""
    personas = {c.id: c.persona for c in run.conversations}
    turns = _turn_lookup(run)

    def group_of(s: Score) -> str | None:
        if by == "persona":
            return personas.get(s.conversation_id, "?")
        if s.turn_index is None:
            return None
        if by == "turn":
            return str(s.turn_index + 1)  # numbered from 1, as the validator's reasons and users count turns
        if by == "question_type":
            qtype, unanswerable = turns.get((s.conversation_id, s.turn_index), ("?", False))
            return f"{qtype} (unanswerable)" if unanswerable else qtype
        raise ValueError(f"cannot group by {by!r}; use turn, question_type or persona")

    grouped: dict[str, dict[str, list[Score]]] = defaultdict(lambda: defaultdict(list))
    for s in run.scores:
        if metrics and s.metric not in metrics:
            continue
        group = group_of(s)
        if group is not None:
            grouped[s.metric][group].append(s)
    keys = [(m, g) for m, groups in grouped.items() for g, _ in sorted(groups.items(), key=_order)]
    summaries = _summarize_clustered([(m, grouped[m][g]) for m, g in keys])
    out: dict[str, dict[str, MetricSummary]] = {m: {} for m in grouped}
    for (m, g), summary in zip(keys, summaries, strict=True):
        out[m][g] = summary
    return out


def _order(item: tuple[str, list[Score]]) -> tuple[int, str]:
    key = item[0]
    return (int(key), "") if key.isdigit() else (1 << 30, key)


def custom_lower_is_better(config: dict[str, Any]) -> frozenset[str]:
    """Names of the custom metrics a run's config declares with ``direction: lower``."""
    declared = (config.get("evaluation") or {}).get("custom_metrics") or []
    return frozenset(m["name"] for m in declared if isinstance(m, dict) and m.get("direction") == "lower")
