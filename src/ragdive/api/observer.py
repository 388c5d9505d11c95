"""The one ``observer`` every use case of the API takes: told of its progress, so a display (the command line's
live lines, a notebook's widget, a log) needs no hook of its own per use case."""

from __future__ import annotations

from pathlib import Path

from ..records import Conversation, Rejection, Score, Totals, Turn
from ..simulation import RunObserver


class Observer(RunObserver):
    """Progress of a use case. Every method does nothing unless overridden. From the simulation (`run`, `simulate`):
    ``started(total, already_done, totals)``, ``turn(conversation_id, turn)``, ``rejection(rejection)``,
    ``conversation(conversation, totals)``; and:"""

    def note(self, line: str) -> None:
        """A line worth showing before the work starts: what loading the corpus read, how a run was split."""

    def run_created(self, run_dir: Path, to_do: int | None = None) -> None:
        """The run directory exists (made or reopened); ``to_do``: the questions (`static`) or conversations
        (`replay`) this session sends, when known."""

    def answered(self, conversation: Conversation) -> None:
        """`static`, `replay`: one question or conversation answered and on disk."""

    def scoring_started(self, total: int | None, done: int) -> None:
        """Scoring begins: ``total`` items (None: not known yet, it grows), ``done`` scored before."""

    def scored(self, score: Score) -> None:
        """One score (or unscored item, with its reason) is on disk."""

    def sweep_started(self, sweep_dir: Path, cells: int, runs: int) -> None:
        """`sweep`: the sweep directory exists (made or reopened), with its cells and planned runs."""

    def run_started(self, run_id: str, cell: str, how: str) -> None:
        """`sweep`: a run begins, ``how`` "new" or "resumed" (finished runs are skipped, not started)."""

    def run_ended(self, run_id: str, cell: str, status: str, error: str | None) -> None:
        """`sweep`: a run ended (or was found finished), with its status and error."""


class Relay(Observer):
    """An observer that passes everything on to ``inner``: a live sink (OpenTelemetry, MLflow) overrides what it
    uses and calls ``super()``, so the caller's display still hears of every event."""

    def __init__(self, inner: Observer) -> None:
        self.inner = inner

    def started(self, total: int, already_done: int, totals: Totals) -> None:
        self.inner.started(total, already_done, totals)

    def turn(self, conversation_id: str, turn: Turn) -> None:
        self.inner.turn(conversation_id, turn)

    def rejection(self, rejection: Rejection) -> None:
        self.inner.rejection(rejection)

    def conversation(self, conversation: Conversation, totals: Totals) -> None:
        self.inner.conversation(conversation, totals)

    def note(self, line: str) -> None:
        self.inner.note(line)

    def run_created(self, run_dir: Path, to_do: int | None = None) -> None:
        self.inner.run_created(run_dir, to_do)

    def answered(self, conversation: Conversation) -> None:
        self.inner.answered(conversation)

    def scoring_started(self, total: int | None, done: int) -> None:
        self.inner.scoring_started(total, done)

    def scored(self, score: Score) -> None:
        self.inner.scored(score)

    def sweep_started(self, sweep_dir: Path, cells: int, runs: int) -> None:
        self.inner.sweep_started(sweep_dir, cells, runs)

    def run_started(self, run_id: str, cell: str, how: str) -> None:
        self.inner.run_started(run_id, cell, how)

    def run_ended(self, run_id: str, cell: str, status: str, error: str | None) -> None:
        self.inner.run_ended(run_id, cell, status, error)
