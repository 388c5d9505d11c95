"""What `ragdive sweep` shows while it works: a line per run as it starts and ends, and where the sweep stands
(runs done of planned and running, cells done, the cost of the runs done, the time left at this session's pace).
On a terminal the standing is a live line under the run lines, fitted to the terminal's width (abbreviated, never
cut); elsewhere (a CI log, a pipe) it is a plain line after each run's end."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, TaskID

from .. import api
from ..errors import RagdiveError
from ..store import RunStore, SweepStore
from .display import console, progress_display


class SweepLines(api.Observer):
    """A line per run as it starts and ends, and after each end where the sweep stands: runs done of planned and
    running, cells done, the cost of the runs done, and the time left at the pace of the runs this session ran;
    the sweep directory once known (for the Ctrl-C hint). Plain lines: a CI log shows them as a terminal does."""

    def __init__(self, target: Console | None = None) -> None:
        self.target = target or console
        self.live: Progress | None = progress_display(self.target) if self.target.is_terminal else None
        self.task: TaskID | None = None
        self.sweep_dir: Path | None = None
        self.began = time.monotonic()
        self.runs = 0
        self.per_cell: dict[str, int] = {}
        self.ended_in_cell: Counter[str] = Counter()
        self.running: set[str] = set()
        self.ran = 0
        """Runs that ran in this session (a resumed sweep's finished runs end at once: not a pace)."""
        self.cost: float | None = 0.0

    def note(self, line: str) -> None:
        self.target.print(line, markup=False)

    def sweep_started(self, sweep_dir: Path, cells: int, runs: int) -> None:
        self.sweep_dir, self.runs, self.began = sweep_dir, runs, time.monotonic()
        self.per_cell = {c.cell: len(c.runs) for c in SweepStore.open(sweep_dir).read().cells}
        self.target.print(f"sweep {sweep_dir}: {cells} cells, {runs} runs", markup=False)
        if self.live is not None:
            self.live.start()
            self.task = self.live.add_task("sweep", total=runs, stats=self.stats())

    def run_started(self, run_id: str, cell: str, how: str) -> None:
        self.running.add(run_id)
        self.target.print(f"{run_id} [{cell}] {how}", markup=False)
        self._show()

    def run_ended(self, run_id: str, cell: str, status: str, error: str | None) -> None:
        self.target.print(f"{run_id} [{cell}] {status}" + (f": {error}" if error else ""), markup=False)
        if run_id in self.running:
            self.running.discard(run_id)
            self.ran += 1
        self.ended_in_cell[cell] += 1
        self._add_cost(run_id)
        if self.live is None:
            self.target.print(self.standing(), markup=False)
        self._show()

    def close(self) -> None:
        """The live line stops where the sweep stood (it stays on screen above the tables)."""
        if self.live is not None:
            self.live.stop()

    def _show(self) -> None:
        if self.live is not None and self.task is not None:
            self.live.update(self.task, completed=sum(self.ended_in_cell.values()), stats=self.stats())

    def stats(self) -> list[str]:
        """The live line's figures beside the bar and the runs done, richest first (display.fit picks)."""
        cells = sum(self.ended_in_cell[c] >= n for c, n in self.per_cell.items())
        cost = "cost unknown" if self.cost is None else f"cost ${self.cost:.4f}"
        left = self.runs - sum(self.ended_in_cell.values())
        eta = self._left(left)
        short_eta = eta.replace("about ", "").replace("time left unknown yet", "eta ?")
        full = [f"cells {cells}/{len(self.per_cell)} done", f"{len(self.running)} running", cost, eta]
        short = [
            f"{cells}/{len(self.per_cell)} cells",
            f"{len(self.running)} run",
            cost.replace("cost ", ""),
            short_eta,
        ]
        return [" | ".join(full), ", ".join(short), ", ".join(short[:3]), ", ".join(short[:2]), short[0]]

    def _left(self, left: int) -> str:
        if not left:
            return "none left"
        if self.ran:
            return f"about {_duration((time.monotonic() - self.began) / self.ran * left)} left"
        return "time left unknown yet"

    def _add_cost(self, run_id: str) -> None:
        run = None if self.sweep_dir is None else self.sweep_dir / "runs" / run_id
        try:
            cost = RunStore.open(run).read_manifest().totals.cost_usd if run is not None else None
        except RagdiveError:
            cost = None  # a run that never wrote its manifest: its cost is not known
        self.cost = None if self.cost is None or cost is None else self.cost + cost

    def standing(self) -> str:
        done = sum(self.ended_in_cell.values())
        cells = sum(self.ended_in_cell[c] >= n for c, n in self.per_cell.items())
        cost = "unknown" if self.cost is None else f"${self.cost:.4f}"
        eta = self._left(self.runs - done)
        return (
            f"sweep: runs {done}/{self.runs} done, {len(self.running)} running, cells {cells}/{len(self.per_cell)} "
            f"done, cost {cost}, {eta}"
        )


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
