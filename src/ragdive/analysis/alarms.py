"""Validity alarms: what in a run's files would make its numbers mislead a reader, computed from the files alone
(conversations and current scores), so the terminal, the report and the manifest say the same thing.

Each alarm is a share of the run over a configured threshold (config.AlarmsConfig): turns the validator never
accepted (overruled), judge failures, conversations in error, answered turns without retrieved contexts, seed
documents used by more than one conversation; and metrics with items but not one score.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import ValidationError

from ..config import AlarmsConfig
from ..records import JUDGE_FAILURES, Alarm, kind_of_unscored
from .summary import RunScores


def alarm_limits(config: dict[str, Any] | None) -> AlarmsConfig:
    """The thresholds of a run's resolved config (its manifest's ``config``), or the defaults."""
    raw = ((config or {}).get("evaluation") or {}).get("alarms")
    try:
        return AlarmsConfig.model_validate(raw) if isinstance(raw, dict) else AlarmsConfig()
    except ValidationError:
        return AlarmsConfig()  # a run written by another version: its own thresholds unreadable, the defaults


def validity_alarms(run: RunScores, limits: AlarmsConfig | None = None) -> list[Alarm]:
    """The alarms of one run, in a fixed order (the same files give the same list)."""
    limits = limits or AlarmsConfig()
    alarms: list[Alarm] = []

    def share(code: str, count: int, total: int, threshold: float | None, what: str) -> None:
        if threshold is None or total == 0:
            return
        value = count / total
        if value > threshold:
            alarms.append(
                Alarm(
                    code=code,
                    message=f"{count} of {total} {what} ({value:.0%}; alarm above {threshold:.0%})",
                    value=value,
                    threshold=threshold,
                )
            )

    turns = [t for c in run.conversations for t in c.turns]
    known = [t for t in turns if t.validator_overruled is not None and (t.attempts or t.validator_overruled)]
    share(
        "overruled_share",
        sum(bool(t.validator_overruled) for t in known),
        len(known),
        limits.overruled_share,
        "turns were accepted only because the validator's attempts ran out (never validated)",
    )
    failed = sum(kind_of_unscored(s) in JUDGE_FAILURES for s in run.scores)
    share(
        "judge_failure_share",
        failed,
        len(run.scores),
        limits.judge_failure_share,
        "score items failed in the judge (call failed or wrong-shape answer): retry with --retry-failed",
    )
    share(
        "error_share",
        sum(c.status == "error" for c in run.conversations),
        len(run.conversations),
        limits.error_share,
        "conversations ended in error: their turns are in no mean; resume the run to redo them",
    )
    answered = [t for t in turns if t.answer is not None]
    share(
        "no_context_share",
        sum(not t.contexts for t in answered),
        len(answered),
        limits.no_context_share,
        "answered turns came with no retrieved contexts: context metrics cannot score them",
    )
    seeds = Counter(tuple(sorted(c.document_ids)) for c in run.conversations)
    share(
        "seed_reuse_share",
        sum(seeds[tuple(sorted(c.document_ids))] > 1 for c in run.conversations),
        len(run.conversations),
        limits.seed_reuse_share,
        "conversations share their seed documents with another one: not independent samples",
    )
    if limits.empty_metrics:
        scored: Counter[str] = Counter()
        items: Counter[str] = Counter()
        for s in run.scores:
            items[s.metric] += 1
            scored[s.metric] += s.value is not None
        for metric in sorted(m for m in items if scored[m] == 0):
            kinds = Counter(kind_of_unscored(s) or "other" for s in run.scores if s.metric == metric)
            why = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
            alarms.append(Alarm(code="empty_metric", message=f"{metric}: none of {items[metric]} items scored ({why})"))
    return alarms
