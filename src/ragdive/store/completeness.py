"""Whether a run that ran to its end did its whole job, counted from its files: conversations still in ``error``
(``--resume`` simulates them again) and items unscored because the judge failed or answered unusably
(``evaluate --retry-failed`` asks it again). Items unscored for a reason in the input (an unanswerable probe, no
contexts, no ground truth...) are the run's honest answer, not a gap. The run session turns gaps into the final
status ``incomplete`` (store.session.decide_ending)."""

from __future__ import annotations

from dataclasses import dataclass

from .counts import FileCounts
from .run import RunStore

EXIT_INCOMPLETE = 4
"""The exit code of a run that ended incomplete (README: exit codes)."""


@dataclass(frozen=True)
class Completeness:
    conversations: int
    in_error: int
    """Conversations whose latest line is status error."""
    items: int
    judge_failed: int
    """Current scores unscored because the judge failed (judge_failed, judge_unusable)."""

    @property
    def complete(self) -> bool:
        return not (self.in_error or self.judge_failed)

    def summary(self) -> str:
        """The counts, and what would complete the run."""
        parts, fixes = [], []
        if self.in_error:
            parts.append(f"{self.in_error} of {self.conversations} conversations in error")
            fixes.append("--resume simulates them again")
        if self.judge_failed:
            parts.append(f"{self.judge_failed} of {self.items} items unscored because the judge failed")
            fixes.append("evaluate --retry-failed asks the judge again")
        return f"incomplete: {', '.join(parts)} ({'; '.join(fixes)})"

    def hint(self, run: str, config: str | None = None, command: str = "run") -> str:
        """The commands, spelled out."""
        steps = []
        if self.in_error:
            steps.append(f"ragdive {command} {config or 'CONFIG'} --resume {run}")
        if self.judge_failed:
            steps.append(f"ragdive evaluate {run} --retry-failed")
        return "continue with: " + " && ".join(steps)


def completeness(store: RunStore, counts: FileCounts | None = None) -> Completeness:
    """Counted from the files' lines read into slim records (store.counts), not whole conversations and scores;
    ``counts``: a counter of this run that has already read most of them (a run's recorder, at its end)."""
    return Completeness(**(counts or FileCounts(store.path)).gaps())
