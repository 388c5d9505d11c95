"""Everything a report shows, as plain JSON-ready data read from one run directory.

The numbers come from the analysis library (the same calls `ragdive analyze --json` makes), never recomputed
here, so the report and the terminal always agree. Text from models, documents and targets passes through
untouched: escaping is the template's job (autoescape) and the JSON block's (see html.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..analysis import RunScores, alarm_limits, summarize_run, validity_alarms
from ..analysis.conversations import (
    ALL,
    DEFAULT_THRESHOLD,
    Embedder,
    PairJudge,
    RunRecords,
    analyse_groups,
    to_data,
)
from ..records import Conversation, RunManifest, Score, Turn, kind_of_unscored, known_rejections
from ..store import RunStore


def report_data(
    store: RunStore,
    embed: Embedder | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    judge_pairs: PairJudge | None = None,
    read: RunScores | None = None,
    themes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The report of one run: setup, cost, metric summaries, conversation analyses, and the conversations.

        ``embed`` is the same-question embedder for uniqueness (None: exact text) and ``judge_pairs`` the optional
        LLM judge of question pairs, passed in because the report may not import the model layer; `ragdive report`
        gives the same defaults as `ragdive analyze`, so the two show the same numbers. ``read``: the run's
        conversations and scores when the caller has just read them (the end of a run prints its summary from them
        first; reading and parsing them again was a third of the report's time). ``themes``: failure themes
    (analysis/themes.py) when the caller computed them (`ragdive report --themes`)."""
    manifest = store.read_manifest()
    conversations = read.conversations if read is not None else store.current_conversations()
    scores = read.scores if read is not None else store.current_scores()
    name = manifest.name or manifest.run_id
    records = RunRecords(name, conversations, store.current_rejections(), scores)
    analysis = analyse_groups([records], embed, threshold=threshold, judge_pairs=judge_pairs)[ALL]
    run = RunScores(name, conversations, scores, kind=manifest.kind)
    summaries = summarize_run(run)
    return {
        "name": name,
        # computed from the files with the run's own thresholds: the same as the terminal and the manifest say
        "alarms": [a.model_dump() for a in validity_alarms(run, alarm_limits(manifest.config))],
        "setup": setup(manifest),
        "cost": cost(manifest),
        "summary": [
            {
                "metric": s.metric,
                "mean": s.mean,
                "n_scored": s.n_scored,
                "n_unscored": s.n_unscored,
                "ci": list(s.ci) if s.ci else None,
                "unscored_reasons": dict(s.unscored_reasons.most_common()),
            }
            for s in summaries
        ],
        "analysis": to_data(analysis),
        "conversations": ConversationViews(conversations, scores),
        "themes": themes,
    }


def setup(manifest: RunManifest) -> list[tuple[str, str]]:
    """(label, value) rows: what was run, with what, and how far it got."""
    corpus = manifest.config.get("corpus") or {}
    rows = [
        ("run", manifest.run_id),
        ("name", manifest.name or "-"),
        ("kind", manifest.kind),
        ("status", manifest.status),
        ("created", manifest.created.isoformat(timespec="seconds")),
        ("target", manifest.target or "-"),
        ("corpus", str(corpus.get("path", "-")) if isinstance(corpus, dict) else "-"),
        ("seed", "-" if manifest.seed is None else str(manifest.seed)),
        ("ragdive version", manifest.package_version or "-"),
    ]
    rows += [(f"model: {role}", model) for role, model in manifest.models.items()]
    for role, r in manifest.roles.items():  # the simulator (and judge) named: what can move scores besides the target
        params = ", ".join(f"{k}={v}" for k, v in sorted(r.params.items())) or "provider defaults"
        prompts = f"{r.prompt_profile or '-'} prompts" + (f" {r.prompts}" if r.prompts else "")
        rows.append((f"setup: {role}", f"{r.model}; {params}; {prompts}"))
    if manifest.error:
        rows.append(("error", manifest.error))
    return rows


def cost(manifest: RunManifest) -> dict[str, Any]:
    t = manifest.totals
    return {
        "conversations": t.conversations,
        "turns": t.turns,
        "rejections": known_rejections(manifest),  # None: unknown (shown so, never 0)
        "errors": t.errors,
        "prompt_tokens": t.prompt_tokens,
        "completion_tokens": t.completion_tokens,
        "cost_usd": t.cost_usd,
        "spend": [s.model_dump() for s in t.spend],
    }


def _score_view(s: Score) -> dict[str, Any]:
    return {
        "metric": s.metric,
        "value": s.value,
        "reason": s.reason,
        "unscored": s.unscored_reason,  # the free text, in the drill-down; tables group by the kind
        "unscored_kind": kind_of_unscored(s),
    }


def _turn_view(t: Turn, scores: Iterable[Score]) -> dict[str, Any]:
    return {
        "number": t.index + 1,  # turns are numbered from 1 everywhere a person reads them
        "type": str(t.question_type),
        "unanswerable": t.unanswerable,
        "message": t.rag_input,
        "standalone": t.standalone_question,
        "ground_truth": t.ground_truth,
        "evidence": t.evidence,
        "answer": t.answer,
        "error": t.error,
        "contexts": [{"text": c.text, "source": c.source, "score": c.score} for c in t.contexts],
        "verdicts": [
            {"valid": a.verdict.valid, "reason": a.verdict.reason, "failed": [str(f) for f in a.verdict.failed_checks]}
            for a in t.attempts
        ],
        "overruled": t.validator_overruled,
        "scores": [_score_view(s) for s in scores],
    }


class ConversationViews:
    """The conversations' views for the browser, each made when it is read and let go after (the report packs
    them one at a time: every view held at once was another copy of every turn, context and score of the run, the
    largest part of the end of a 10,000-conversation run's memory). Iterable again; ``len`` without making any."""

    def __init__(self, conversations: list[Conversation], scores: Iterable[Score]) -> None:
        self.conversations = conversations
        self.scores: dict[str, list[Score]] = {}
        for s in scores:
            self.scores.setdefault(s.conversation_id, []).append(s)

    def __len__(self) -> int:
        return len(self.conversations)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for c in self.conversations:
            yield conversation_view(c, self.scores.get(c.id, []))


def conversation_view(c: Conversation, mine: list[Score]) -> dict[str, Any]:
    """One conversation for the browser: its turns, each with everything the run recorded about it."""
    by_turn: dict[int | None, list[Score]] = {}
    for s in mine:
        by_turn.setdefault(s.turn_index, []).append(s)
    return {
        "id": c.id,
        "persona": c.persona,
        "documents": c.document_ids,
        "status": c.status,
        "end_reason": c.end_reason or c.error,
        "stop_reason": c.stop_reason,
        "user_end_reason": c.user_end_reason,
        "types": sorted({str(t.question_type) for t in c.turns}),
        "has_unscored": any(s.value is None for s in mine),
        "scores": [_score_view(s) for s in by_turn.get(None, [])],
        "turns": [_turn_view(t, by_turn.get(t.index, [])) for t in c.turns],
    }
