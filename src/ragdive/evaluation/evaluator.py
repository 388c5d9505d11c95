"""Score a run: every (conversation, turn, metric) not yet in evaluations.jsonl, concurrently, written as each
finishes. A killed evaluation resumes where it stopped and never scores an item twice."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from ..records import Conversation, ModelLimit, ModelSpend, RoleSetup, Score, Usage
from ..store import RunRecorder, RunStore, ScoreKey, score_key, spend_since
from .arrivals import AnsweredTurn, Arrivals
from .jobs import conversation_job, early_job, held_job, stamp, turn_job
from .judging import JudgeProtocol
from .metrics import ConversationMetric, TurnMetric, resolve_metrics
from .metrics.base import JUDGE_FAILED
from .window import bounded

SPEND_EVERY_S = 1.0
"""How often a scoring session adds the judge's spend to the manifest while it runs (and once at its end)."""


def judge_failed(score: Score) -> bool:
    return not score.scored and bool(score.details.get(JUDGE_FAILED))


@dataclass
class EvaluationResult:
    """What one `evaluate` call did."""

    written: int = 0
    unscored: int = 0
    skipped: int = 0
    """Items already scored by an earlier call (resume)."""
    judge_calls: int = 0
    notes: list[str] = field(default_factory=list)
    changed: dict[str, int] = field(default_factory=dict)
    """Per metric: stored scores made by another version of it (rescored only when asked)."""


class Evaluator:
    """Applies the chosen metrics with one judge. Judge concurrency is bounded inside the Judge."""

    def __init__(self, judge: JudgeProtocol, metrics: list[str] | None) -> None:
        self.judge = judge
        self.notes: list[str] = []
        """Said with every evaluation's result (e.g. which metrics an engine cannot compute)."""
        self.turn_metrics, self.conversation_metrics = self.build_metrics(metrics)

    def build_metrics(self, names: list[str] | None) -> tuple[list[TurnMetric], list[ConversationMetric]]:
        """The metric objects for ``names`` (None: every registered one). Another engine overrides this."""
        return resolve_metrics(names)

    @property
    def score_names(self) -> list[str]:
        """Metric names as they appear in evaluations.jsonl."""
        return [m.name for m in self.turn_metrics] + [m.name for m in self.conversation_metrics]

    def jobs(
        self, conversations: list[Conversation], done: set[ScoreKey], *, multi_turn: bool = True
    ) -> tuple[list[Callable[[], Awaitable[Score]]], int]:
        """Pending scoring jobs and how many were skipped because they are already in the store."""
        pending: list[Callable[[], Awaitable[Score]]] = []
        skipped = 0
        for conv in conversations:
            jobs, skips = self.conversation_jobs(conv, done, multi_turn=multi_turn)
            pending.extend(jobs)
            skipped += skips
        return pending, skipped

    def conversation_jobs(
        self, conv: Conversation, done: set[ScoreKey], *, multi_turn: bool = True
    ) -> tuple[list[Callable[[], Awaitable[Score]]], int]:
        """One conversation's pending jobs (cheap closures: a prompt is rendered only when its job runs)."""
        pending: list[Callable[[], Awaitable[Score]]] = []
        skipped = 0
        for turn in conv.turns:
            for tm in self.turn_metrics:
                if (conv.id, turn.index, tm.name) in done:
                    skipped += 1
                else:
                    pending.append(turn_job(tm, self.judge, conv, turn.index))
        for cm in self.conversation_metrics if multi_turn else []:
            if (conv.id, None, cm.name) in done:
                skipped += 1
            else:
                pending.append(conversation_job(cm, self.judge, conv))
        return pending, skipped

    def items_per_conversation(self, turns: int) -> int:
        """Score lines a conversation of ``turns`` turns gets (progress totals before it exists)."""
        return turns * len(self.turn_metrics) + len(self.conversation_metrics)

    @property
    def window(self) -> int:
        """Jobs in flight at once: four times the judge's concurrency, so a job between its calls (a multi-step
        metric) or waiting for its conversation's line, the cache's commit or its score's fsync does not leave a
        judge slot idle; the rest are created as these finish."""
        return 4 * max(1, int(getattr(self.judge, "concurrency", 4)))

    def changed_scores(self, existing: list[Score]) -> list[Score]:
        """Scores of this evaluator's metrics whose version or prompt fingerprint is not the current one (a score
        from before versions were recorded counts as changed: nothing says which prompt made it)."""
        metrics: list[TurnMetric | ConversationMetric] = [*self.turn_metrics, *self.conversation_metrics]
        current = {m.name: m.identity() for m in metrics}
        return [
            s
            for s in existing
            if s.metric in current
            and (s.metric_version, s.prompt_fingerprint)
            != (current[s.metric]["metric_version"], current[s.metric]["prompt_fingerprint"])
        ]

    async def score_conversations(self, conversations: list[Conversation]) -> list[Score]:
        """Score in memory (tests, benchmarks); `evaluate_run` is the one that writes."""
        jobs, _ = self.jobs(conversations, set())
        return list(await asyncio.gather(*(job() for job in jobs)))

    def plan_run(
        self,
        store: RunStore,
        *,
        retry_judge_failures: bool = False,
        rescore_changed: bool = False,
        redone: set[str] | None = None,
    ) -> ScoringPlan:
        """What is to be scored, read from the store now (synchronously: a simulation started after this call
        cannot add a conversation both to this plan and to the stream). ``redone``: ids a simulation in progress
        is writing again; their lines on disk are left to the stream's new lines."""
        manifest = store.read_manifest()
        result = EvaluationResult(notes=list(self.notes))
        conversations = [c for c in store.current_conversations() if c.id not in (redone or set())]
        existing = store.current_scores()
        changed = self.changed_scores(existing)
        for metric_name, count in sorted(Counter(s.metric for s in changed).items()):
            result.changed[metric_name] = count
            # an imported run's scores carry their source as fingerprint ("import:<format>"): another tool's judge
            imported = any(
                s.metric == metric_name and (s.prompt_fingerprint or "").startswith("import:") for s in changed
            )
            made_by = (
                "another tool (imported)"
                if imported
                else "another version of the metric (its rule or prompt changed since)"
            )
            if not rescore_changed:
                result.notes.append(
                    f"{count} {metric_name} score(s) were made by {made_by}; they are kept as they are: "
                    "--rescore-changed scores them again"
                )
        redo = {score_key(s) for s in changed} if rescore_changed else set()
        done = {
            score_key(s)
            for s in existing
            if not (retry_judge_failures and judge_failed(s)) and score_key(s) not in redo
        }
        # an imported static set (provenance shape single-turn) is one question per conversation too
        single_turn = manifest.provenance is not None and manifest.provenance.shape == "single-turn"
        multi_turn = manifest.kind != "static" and not single_turn
        if not multi_turn and self.conversation_metrics:
            result.notes.append("static run: one question per conversation, multi-turn metrics not computed")
        pending = 0
        for conv in conversations:
            jobs, skipped = self.conversation_jobs(conv, done, multi_turn=multi_turn)
            pending += len(jobs)
            result.skipped += skipped
        return ScoringPlan(conversations, done, multi_turn, pending, result)

    async def evaluate_run(
        self,
        store: RunStore,
        *,
        retry_judge_failures: bool = False,
        rescore_changed: bool = False,
        on_start: Callable[[int, int], None] | None = None,
        on_score: Callable[[Score], None] | None = None,
    ) -> EvaluationResult:
        """Score what is not scored yet. With ``retry_judge_failures``, items the judge failed on are asked again
        (the new line supersedes the old one for every reader); with ``rescore_changed``, so are items scored by
        another version of their metric (version or prompt fingerprint differs from the registry's).
        ``on_start(total, done)``: the run's items and how many of them were already scored, once they are counted
        (progress shows done/total)."""
        plan = self.plan_run(store, retry_judge_failures=retry_judge_failures, rescore_changed=rescore_changed)
        return await self.score_planned(store, plan, on_start=on_start, on_score=on_score)

    async def score_planned(
        self,
        store: RunStore,
        plan: ScoringPlan,
        *,
        incoming: Arrivals | None = None,
        expected: int = 0,
        on_start: Callable[[int, int], None] | None = None,
        on_score: Callable[[Score], None] | None = None,
    ) -> EvaluationResult:
        """Score the plan's conversations, then what ``incoming`` brings from a simulation in progress, at most
        ``window`` jobs in flight, each score written as it finishes. ``incoming`` yields each turn as soon as it
        is answered (an `AnsweredTurn`: its per-turn metrics are judged at once, so the judge works through the
        conversation's later turns instead of waiting for its end) and each conversation once its line is on
        disk (its conversation metrics are judged then, and every score of it is written then, stamped with that
        line: nothing is written for a conversation that is not on disk, and a conversation the run drops takes
        its early scores with it). ``expected``: items the incoming conversations will bring at most (for the
        progress total)."""
        result = plan.result
        if on_start:
            on_start(plan.pending + result.skipped + expected, result.skipped)
        calls_before, usage_before = self.judge.calls, self.judge.usage
        early: dict[str, dict[tuple[int, str], asyncio.Future[Score]]] = {}
        """Per conversation id: its turns' scores judged before its line was written, by (turn index, metric)."""
        landed = incoming.on_disk if incoming is not None else {}
        handed: set[ScoreKey] = set()
        """Scores handed to the store (on disk once it drains)."""

        def written(job: Callable[[], Awaitable[Score]]) -> Callable[[], Awaitable[Score | None]]:
            async def score_and_write() -> Score:
                score = await job()
                for model in self.judge.local_models:
                    await model.settled()  # the judge's answers are in the cache before the score counts
                handed.add(score_key(score))  # no await before the hand-over in write_score
                await store.write_score(score)  # on disk before it counts; concurrent jobs share one fsync
                return score

            return score_and_write

        def judged_early(answered: AnsweredTurn) -> Iterator[Callable[[], Awaitable[Score | None]]]:
            held = early.setdefault(answered.conversation.id, {})
            for metric in self.turn_metrics:
                future = held[answered.turn.index, metric.name] = asyncio.get_running_loop().create_future()
                yield early_job(metric, self.judge, answered, future)

        def on_disk(conv: Conversation) -> Iterator[Callable[[], Awaitable[Score | None]]]:
            held = early.get(conv.id, {})
            if not held:
                landed.pop(conv.id, None)  # nothing of it is held: nothing to keep it for
            for cm in self.conversation_metrics if plan.multi_turn else []:
                yield written(conversation_job(cm, self.judge, conv))
            for turn in conv.turns:
                for tm in self.turn_metrics:
                    future = held.get((turn.index, tm.name))  # judged early (or still being judged)
                    job = turn_job(tm, self.judge, conv, turn.index) if future is None else held_job(conv, future)
                    yield written(job)

        async def source() -> AsyncIterator[Callable[[], Awaitable[Score | None]]]:
            for conv in plan.conversations:
                for job in self.conversation_jobs(conv, plan.done, multi_turn=plan.multi_turn)[0]:
                    yield written(job)
            if incoming is None:
                return
            async for arrival in incoming:
                jobs = judged_early(arrival) if isinstance(arrival, AnsweredTurn) else on_disk(arrival)
                for next_job in jobs:
                    yield next_job

        def forget(score: Score) -> None:
            """A held score is on disk: let it go, and its conversation once nothing of it is held (a long run
            must not keep every conversation and score it wrote in memory)."""
            held = early.get(score.conversation_id)
            if held is None or score.turn_index is None:
                return  # not judged early
            if held.pop((score.turn_index, score.metric), None) is None or held:
                return
            del early[score.conversation_id]
            landed.pop(score.conversation_id, None)

        recorder = RunRecorder(store)  # the same one throughout: it adds only what grew since its last write
        recorded_at = time.monotonic()
        ledgers = list({id(m.context.ledger): m.context.ledger for m in self.judge.local_models}.values())
        for ledger in ledgers:
            recorder.attach(ledger)  # every judge request's spend on disk as it is counted (store.spend_journal)
        ledger_before = [line for ledger in ledgers for line in ledger.spend() if line.role == "judge"]

        def record_spend() -> None:
            result.judge_calls = self.judge.calls - calls_before
            now = [line for ledger in ledgers for line in ledger.spend() if line.role == "judge"]
            limits = [limit for model in self.judge.local_models for limit in model.context.limits()]
            setups = [model.setup() for model in self.judge.local_models]  # none for an engine of its own
            if now:  # the model layer's own count: requests sent, cache hits apart, retries and faults
                manifest = store.read_manifest()
                models = {**manifest.models, **({"judge": self.judge.name} if result.written else {})}
                # the judge's model and parameters (temperature 0 unless configured), once it wrote a score
                roles = {"roles": {**manifest.roles, "judge": setups[0]}} if result.written and setups else {}
                recorder.record(spend=spend_since(ledger_before, now), limits=limits, models=models, **roles)
                return
            spent = _spent(usage_before, self.judge.usage)  # an engine whose calls bypass the model layer (Ragas)
            record_scoring(
                store,
                self.judge.name,
                result.written > 0,
                spent,
                result.judge_calls,
                limits,
                recorder=recorder,
                setup=setups[0] if setups else None,
            )

        try:
            async with aclosing(bounded(source(), self.window)) as scores:
                async for score in scores:  # each one already written by its job
                    if score is None:
                        continue  # judged early: written with its conversation
                    forget(score)
                    result.written += 1
                    result.unscored += 0 if score.scored else 1
                    if on_score:
                        on_score(score)
                    if time.monotonic() - recorded_at >= SPEND_EVERY_S:
                        record_spend()  # a SIGKILL loses at most this long of the judge's spend, not a session's
                        recorded_at = time.monotonic()
        finally:  # on an interrupt or a bug the jobs in flight are stopped; what finished is already written
            await store.drain_scores()  # lines of cancelled jobs that were already handed over: counted too
            # early scores of conversations on disk whose writing job was stopped: written (one fsync);
            # those of conversations never written are dropped with them
            judged = [
                (landed[cid], future.result())
                for cid, held in early.items()
                if cid in landed
                for future in held.values()
                if future.done() and not future.cancelled()
            ]
            finished = [stamp(conv, score) for conv, score in judged if score_key(score) not in handed]
            for held in early.values():
                for future in held.values():
                    future.cancel()
            if finished:
                store.append_scores(finished)
                result.written += len(finished)
                result.unscored += sum(not s.scored for s in finished)
            record_spend()
        return result


@dataclass
class ScoringPlan:
    """What `Evaluator.plan_run` found to score on disk."""

    conversations: list[Conversation]
    done: set[ScoreKey]
    multi_turn: bool
    pending: int
    """Items of ``conversations`` not scored yet."""
    result: EvaluationResult


def _spent(before: Usage | None, after: Usage | None) -> Usage | None:
    if before is None or after is None:
        return None  # a judge that does not report usage (the Ragas engine)
    cost = None if before.cost_usd is None or after.cost_usd is None else after.cost_usd - before.cost_usd
    return Usage(
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        cost_usd=cost,
        provider_cached_tokens=after.provider_cached_tokens - before.provider_cached_tokens,
    )


def record_scoring(
    store: RunStore,
    judge: str,
    wrote: bool,
    usage: Usage | None,
    calls: int,
    limits: list[ModelLimit] | None = None,
    *,
    recorder: RunRecorder | None = None,
    setup: RoleSetup | None = None,
) -> None:
    """Scores are recounted from evaluations.jsonl by the run recorder; the judge's spend so far this session
    (``usage``, ``calls``) is added to the run's (``recorder``: the one that recorded it before, so that only the
    growth is added), and the judge named in the manifest once it wrote a score."""
    spend = None
    if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
        spend = [
            ModelSpend(
                role="judge",
                model=judge,
                calls=calls,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost_usd=usage.cost_usd,
                provider_cached_tokens=usage.provider_cached_tokens,
            )
        ]
    manifest = store.read_manifest()
    models = {**manifest.models, **({"judge": judge} if wrote else {})}
    fields: dict[str, Any] = {"models": models}
    if wrote and setup is not None:  # the judge's model and parameters (temperature 0 unless configured)
        fields["roles"] = {**manifest.roles, "judge": setup}
    (recorder or RunRecorder(store)).record(spend=spend, limits=limits or [], **fields)
