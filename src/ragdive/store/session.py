"""A run session: the one owner of a run's lifecycle in manifest.json.

Every command that works on a run (run, simulate, evaluate, static, replay, a sweep's cell, the driver of a run split
among Ray workers, the driver's copy of a run made on a Ray worker) wraps its work in one ``RunSession``. The
session alone calls the recorder's ``start`` and ``finish``: it marks the run ``running`` once, and writes its final
status once, after everything the work started has unwound (so no late write of a cancelled task can follow it).
The stages (the simulation runner, the evaluator, static and replay asking) never write a status: they return an
outcome, or raise.

**Where a run's final status is decided:** `decide_ending`, below, and nowhere else. It maps what the work returned
(its outcome's ``status``: ``finished``, ``budget_exceeded`` or ``failed``, and its ``error``) or what it raised
(cancellation, a spent budget, an error) to one of the manifest's final statuses. A run whose work finished with
conversations in error or items the judge failed on ends ``incomplete`` (store.completeness counts them), one more
branch there, and one more exit code (4) where the command line maps statuses to exit codes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..errors import BudgetExceeded, RagdiveError
from ..gc_policy import fewer_collections
from ..records import ModelLimit, ModelSpend, RunManifest
from .completeness import Completeness
from .lock import acquire
from .recorder import RunRecorder
from .run import RunStore

OutcomeT = TypeVar("OutcomeT")

FINAL = ("finished", "incomplete", "failed", "interrupted", "budget_exceeded")
"""The statuses a session may end a run with (the manifest's schema checks the same list)."""

UNFINISHED = ("failed", "interrupted", "budget_exceeded")


@dataclass(frozen=True)
class Ending:
    """How a session ended: the final status and, when it did not finish, why."""

    status: str
    error: str | None = None


@runtime_checkable
class Outcome(Protocol):
    """What a stage returns: how its own work ended (``finished``, ``budget_exceeded``, or ``failed`` when the stage
    reports a failure instead of raising it, as a run split among workers does) and why."""

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str | None: ...


def decide_ending(
    outcome: Outcome | None,
    raised: BaseException | None,
    before: RunManifest | None,
    gaps: Callable[[], Completeness] | None = None,
) -> Ending:
    """The one place a run's final status is decided (see the module's docstring).

    ``before``: the manifest as it was when this session started, for a session that only adds to a run (scoring an
    existing run): scoring every conversation of a run whose simulation did not finish does not make the run
    finished; it keeps the status and error it had. ``gaps``: what the run's files hold undone; a run whose work
    finished with conversations in error or items the judge failed on ends ``incomplete``, with the counts."""
    if raised is not None:
        if isinstance(raised, asyncio.CancelledError | KeyboardInterrupt):
            return Ending("interrupted")
        if isinstance(raised, BudgetExceeded):
            return Ending("budget_exceeded", f"budget exceeded: {raised}")
        if isinstance(raised, RagdiveError):
            return Ending("failed", str(raised))
        return Ending("failed", f"{type(raised).__name__}: {raised}")  # a bug: still say why the run stopped
    status = outcome.status if outcome is not None else "finished"
    error = outcome.error if outcome is not None else None
    if status not in FINAL:  # a stage that never wrote a run ("planned"): it did not do its job
        return Ending("failed", error or f"the work ended as {status!r}")
    if status == "finished" and before is not None and before.status in UNFINISHED:
        return Ending(before.status, before.error)
    if status in ("finished", "incomplete") and gaps is not None:
        found = gaps()
        return Ending("finished") if found.complete else Ending("incomplete", found.summary())
    return Ending(status, error)


class RunSession:
    """One session of work on one run. ``recorder``: the recorder the work records its counts and spend with (its
    spend snapshot is shared, so the final write adds only what the work spent since its last write, never twice);
    ``spend`` and ``limits``: what this session's models spent so far and the limits that backed off, written
    with the final status. ``adds_to_run``: this session only adds to a run made before (scoring it): see
    `decide_ending`."""

    def __init__(
        self,
        store: RunStore,
        *,
        recorder: RunRecorder | None = None,
        spend: Callable[[], Iterable[ModelSpend]] | None = None,
        limits: Callable[[], Iterable[ModelLimit]] | None = None,
        adds_to_run: bool = False,
        final_fields: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.store = store
        self.recorder = recorder or RunRecorder(store)
        self._spend = spend
        self._limits = limits
        self._adds_to_run = adds_to_run
        self._final_fields = final_fields
        """More manifest fields for the final write of a run that ran to its end (its validity alarms)."""
        self.before: RunManifest | None = None
        self._release: Callable[[], None] | None = None
        self.ending: Ending | None = None
        self.manifest: RunManifest | None = None
        """The manifest as the session last wrote it (after `start`, then after `conclude`)."""

    @property
    def started(self) -> bool:
        return self.before is not None

    def start(self) -> RunManifest:
        """Mark the run ``running`` (once; later calls return the manifest of the first)."""
        if self.manifest is not None:
            return self.manifest
        # one writer per run: the command holds the run's lock since it opened it; the session holds it too (the
        # same process re-enters it), so no session of any caller writes a run another process is writing
        self._release = acquire(self.store.path)
        try:
            self.before = self.store.read_manifest()
            self.manifest = self.recorder.start(spend=self._spend_now(), limits=self._limits_now())
        except BaseException:
            self._release()
            self._release = None
            raise
        return self.manifest

    def conclude(self, outcome: Outcome | None = None, raised: BaseException | None = None) -> Ending:
        """Write the run's final status, decided by `decide_ending` from the work's outcome or what it raised.
        Once: a second call returns the first ending and writes nothing."""
        if self.ending is not None:
            return self.ending
        gaps = self.recorder.completeness  # read only when the work finished
        ending = decide_ending(outcome, raised, self.before if self._adds_to_run else None, gaps)
        self.ending = ending
        ran = ending.status in ("finished", "incomplete") and self._final_fields is not None
        try:
            fields = self._final_fields() if ran and self._final_fields is not None else {}
            self.manifest = self.recorder.finish(
                ending.status, ending.error, spend=self._spend_now(), limits=self._limits_now(), **fields
            )
        finally:
            if self._release is not None:
                self._release()
        return ending

    async def run(self, work: Callable[[], Awaitable[OutcomeT]]) -> OutcomeT:
        """Start, await ``work()``, conclude from what it returned (an `Outcome`, or anything else: finished) or
        raised; what it raised is raised again once the final status is written."""
        self.start()
        # a run's many short-lived objects die young (ragdive.gc_policy), also while the conclusion reads every record
        # for the alarms: under CPython's default it collected the whole heap there (~0.1 s of a 200 x 5 run's CPU)
        with fewer_collections():
            try:
                outcome = await work()
            except BaseException as exc:
                self.conclude(raised=exc)
                raise
            self.conclude(outcome if isinstance(outcome, Outcome) else None)
        return outcome

    def _spend_now(self) -> list[ModelSpend] | None:
        return list(self._spend()) if self._spend is not None else None

    def _limits_now(self) -> list[ModelLimit]:
        return list(self._limits()) if self._limits is not None else []
