"""The run recorder: the only code that changes a run's status, counters and totals in manifest.json.

Two kinds of numbers, kept two ways:
- **Counts** (conversations, turns, errors, rejections by category, scores and unscored) are counted from the
  JSONL files at every write (store.counts: the "latest line wins" rule, each line read once). Nothing is
  incremented, so after any kill and resume they equal the files' content.
- **Spend** (tokens and cost, per role and model) is not in the files: failed drafts, corrective retries and
  conversations a kill dropped were paid for too. It is carried in the manifest from session to session; each
  recorder adds only what its own session spent since its last write (``spend`` is a running snapshot), so
  several recorders of one run (the simulation's, then the evaluation's) never count a call twice.

Every write reads the manifest first: whatever another recorder of the same run wrote is kept.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any, Protocol

from ..records import ModelLimit, ModelSpend, RunManifest, Totals
from .completeness import Completeness, completeness
from .counts import FileCounts
from .liveness import this_process
from .run import RunStore
from .spend_journal import SpendJournal, journal_for, read_journal

SpendKey = tuple[str, str]


class _Ledger(Protocol):
    def journal_to(self, journal: SpendJournal) -> None: ...


class RunRecorder:
    """Writes one run's status and totals. Cheap to create: a call site that only ends a run makes its own."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._counts = _counts_of(store)
        self._recorded: dict[SpendKey, ModelSpend] = {}
        """The spend snapshot this recorder has already added to the manifest."""
        self._journal: SpendJournal | None = None

    def attach(self, ledger: _Ledger) -> None:
        """Journal every request ``ledger`` counts into the run's spend.jsonl as it happens (store.spend_journal).
        The first attach of a process adds what killed sessions journaled beyond the manifest, before any line of
        this session is written."""
        journal, fresh = journal_for(self.store.path)
        if fresh:
            self._recover()
        self._journal = journal
        ledger.journal_to(journal)

    def completeness(self) -> Completeness:
        """What the run left undone, from this recorder's counter: at the end of a run it has read all but the
        last lines, so this reads those only (store.completeness)."""
        return completeness(self.store, self._counts)

    # -- status ------------------------------------------------------------------------------------------------
    def start(
        self, spend: Iterable[ModelSpend] | None = None, limits: Iterable[ModelLimit] = (), **fields: Any
    ) -> RunManifest:
        """Status ``running``, stamped with this process (see liveness.shown_status), the error of an earlier
        session cleared: a session starts or resumes the run."""
        return self._write(spend, limits, status="running", process=this_process(), error=None, **fields)

    def record(
        self, spend: Iterable[ModelSpend] | None = None, limits: Iterable[ModelLimit] = (), **fields: Any
    ) -> RunManifest:
        """Recount from the files and add what this session spent since the last write; status unchanged.
        ``limits``: adaptive limits that backed off (they replace that model's entry: the latest session's)."""
        return self._write(spend, limits, **fields)

    def finish(
        self,
        status: str,
        error: str | None = None,
        spend: Iterable[ModelSpend] | None = None,
        limits: Iterable[ModelLimit] = (),
        **fields: Any,
    ) -> RunManifest:
        """How the run (or this session of it) ended: finished, failed, interrupted or budget_exceeded (checked
        by the manifest's schema)."""
        return self._write(spend, limits, status=status, error=error, **fields)

    def _recover(self) -> None:
        """Add the journal lines no manifest write accounted for: spent by a session killed before its next
        write. Each (role, model) line of the manifest says how many of its journal lines it holds."""
        journaled = read_journal(self.store.path)
        manifest = self.store.read_manifest()
        lines = {(s.role, s.model): s for s in manifest.totals.spend}
        found = []
        for key, entries in journaled.items():
            line = lines.get(key, ModelSpend(role=key[0], model=key[1]))
            extra = entries[line.journal_lines :]
            if extra:
                grew = _merge([e.model_copy(update={"role": key[0], "model": key[1]}) for e in extra])[key]
                found.append(grew)
                lines[key] = _plus(line, grew).model_copy(update={"journal_lines": len(entries)})
        if not found:
            return
        t = manifest.totals
        prompt = None if t.prompt_tokens is None else t.prompt_tokens + sum(g.prompt_tokens for g in found)
        completion = (
            None if t.completion_tokens is None else t.completion_tokens + sum(g.completion_tokens for g in found)
        )
        cost = t.cost_usd
        for g in found:
            cost = None if cost is None or g.cost_usd is None else cost + g.cost_usd
        spend = sorted(lines.values(), key=lambda s: (s.role, s.model))
        totals = t.model_copy(
            update={"spend": spend, "prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": cost}
        )
        self.store._update_manifest({"totals": totals})  # the one writer of these fields

    # -- writing -----------------------------------------------------------------------------------------------
    def _write(self, spend: Iterable[ModelSpend] | None, limits: Iterable[ModelLimit], **fields: Any) -> RunManifest:
        manifest = self.store.read_manifest()
        counts = self._counts.update()
        if manifest.totals.rejections is None:  # unknown (an imported run): none on disk does not make it 0
            counts.update(rejections=None, rejections_by_category={})
        totals = manifest.totals.model_copy(update=counts)
        if spend is not None:
            totals = self._add_spend(totals, list(spend))
        now = {limit.model: limit for limit in limits}
        if now:
            kept = [limit for limit in totals.limits if limit.model not in now]
            totals = totals.model_copy(update={"limits": sorted([*kept, *now.values()], key=lambda m: m.model)})
        return self.store._update_manifest({**fields, "totals": totals})  # the one writer of these fields

    def _add_spend(self, totals: Totals, snapshot: list[ModelSpend]) -> Totals:
        lines = {(s.role, s.model): s.model_copy() for s in totals.spend}
        prompt, completion, cost = totals.prompt_tokens, totals.completion_tokens, totals.cost_usd
        if not lines and prompt == 0 and completion == 0:
            cost = 0.0  # nothing spent yet: the cost is known (nothing), and stays so while every price is known
        for now in _merge(snapshot).values():
            key = (now.role, now.model)
            before = self._recorded.get(key, ModelSpend(role=now.role, model=now.model))
            grew = _minus(now, before)
            if (
                not (grew.calls or grew.prompt_tokens or grew.completion_tokens or grew.retries or grew.faults)
                and not grew.cached_calls
            ):
                continue
            line = lines.setdefault(key, ModelSpend(role=now.role, model=now.model))
            lines[key] = _plus(line, grew)
            if self._journal is not None and key in self._journal.counts:
                # the snapshot holds every line this session journaled for the key: none is left to recover
                lines[key].journal_lines = self._journal.counts[key]
            # an imported run's tokens are unknown (None): what ragdive spends on it since does not make them known
            prompt = None if prompt is None else prompt + grew.prompt_tokens
            completion = None if completion is None else completion + grew.completion_tokens
            # unknown stays unknown: a known total plus an unknown price is unknown, never "free"
            cost = None if cost is None or grew.cost_usd is None else cost + grew.cost_usd
            self._recorded[key] = now
        return totals.model_copy(
            update={
                "spend": sorted(lines.values(), key=lambda s: (s.role, s.model)),
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "cost_usd": cost,
            }
        )


_COUNTS: weakref.WeakKeyDictionary[RunStore, FileCounts] = weakref.WeakKeyDictionary()


def _counts_of(store: RunStore) -> FileCounts:
    """One counter for every recorder of one store object (a run's simulation and its evaluation each have a
    recorder): each reads the lines appended since its last update, so two counters parsed every line twice. Their
    counts are what the files hold either way; a recorder on another RunStore of the same folder counts afresh."""
    counts = _COUNTS.get(store)
    if counts is None:
        counts = _COUNTS[store] = FileCounts(store.path)
    return counts


def spend_since(before: Iterable[ModelSpend], now: Iterable[ModelSpend]) -> list[ModelSpend]:
    """What was spent between two spend snapshots (per role and model): a ledger's snapshot taken before some
    work, and one taken after it."""
    earlier = _merge(list(before))
    return [
        _minus(line, earlier.get(key, ModelSpend(role=line.role, model=line.model)))
        for key, line in _merge(list(now)).items()
    ]


def merge_spend(lines: Iterable[ModelSpend]) -> dict[SpendKey, ModelSpend]:
    """Spend lines summed per (role, model) (journal lines mirrored from a worker: store.mirror)."""
    return _merge(list(lines))


def _merge(snapshot: list[ModelSpend]) -> dict[SpendKey, ModelSpend]:
    """One line per (role, model): a session with several usage ledgers may report the same pair twice."""
    merged: dict[SpendKey, ModelSpend] = {}
    for s in snapshot:
        key = (s.role, s.model)
        merged[key] = _plus(merged[key], s) if key in merged else s
    return merged


def _plus(a: ModelSpend, b: ModelSpend) -> ModelSpend:
    cost = None if a.cost_usd is None or b.cost_usd is None else a.cost_usd + b.cost_usd
    return a.model_copy(
        update={
            "calls": a.calls + b.calls,
            "cached_calls": a.cached_calls + b.cached_calls,
            "prompt_tokens": a.prompt_tokens + b.prompt_tokens,
            "completion_tokens": a.completion_tokens + b.completion_tokens,
            "cost_usd": cost,
            "provider_cached_tokens": a.provider_cached_tokens + b.provider_cached_tokens,
            "retries": a.retries + b.retries,
            "faults": {k: a.faults.get(k, 0) + b.faults.get(k, 0) for k in sorted({*a.faults, *b.faults})},
        }
    )


def _minus(now: ModelSpend, before: ModelSpend) -> ModelSpend:
    cost = None if now.cost_usd is None or before.cost_usd is None else now.cost_usd - before.cost_usd
    return now.model_copy(
        update={
            "calls": now.calls - before.calls,
            "cached_calls": now.cached_calls - before.cached_calls,
            "prompt_tokens": now.prompt_tokens - before.prompt_tokens,
            "completion_tokens": now.completion_tokens - before.completion_tokens,
            "cost_usd": cost,
            "provider_cached_tokens": now.provider_cached_tokens - before.provider_cached_tokens,
            "retries": now.retries - before.retries,
            "faults": {k: n - before.faults.get(k, 0) for k, n in now.faults.items() if n > before.faults.get(k, 0)},
        }
    )
