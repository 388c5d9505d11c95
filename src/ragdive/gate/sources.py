"""What a gate checks, read from disk: one run, repeats of one configuration (``a,b,c``), or a sweep (one group per
cell, its repeated runs; a cell's static arm is a different experiment and is left out)."""

from __future__ import annotations

from pathlib import Path

from ..analysis import RunScores
from ..errors import ConfigError
from ..store import RunStore, SweepStore
from ..store.run import MANIFEST


def load_runs(arg: str | Path) -> list[RunScores]:
    """A run directory, or comma-separated repeats of one configuration."""
    paths = [p.strip() for p in str(arg).split(",") if p.strip()]
    if not paths:
        raise ConfigError(f"empty run group {str(arg)!r}")
    return [RunScores.from_store(RunStore.open(Path(p))) for p in paths]


def group_name(runs: list[RunScores]) -> str:
    return runs[0].name + (f" (+{len(runs) - 1} repeats)" if len(runs) > 1 else "")


def run_dirs(arg: str | Path) -> list[Path]:
    """The run directories ``arg`` names: its comma-separated runs, or a sweep's runs that have a manifest."""
    path = Path(str(arg))
    if "," not in str(arg) and SweepStore.exists(path):
        sweep = SweepStore.open(path)
        return [
            sweep.run_path(e.run_id)
            for cell in sweep.read().cells
            for e in cell.runs
            if e.repeat != "static" and (sweep.run_path(e.run_id) / MANIFEST).is_file()
        ]
    return [Path(p.strip()) for p in str(arg).split(",") if p.strip()]


def first_run_dir(arg: str | Path) -> Path:
    dirs = run_dirs(arg)
    if not dirs:
        raise ConfigError(f"{arg}: no run to gate")
    return dirs[0]


def load_groups(arg: str | Path) -> list[tuple[str, list[RunScores]]]:
    """(name, runs) per configuration: a sweep gives one per cell with a finished or partial run."""
    path = Path(str(arg))
    if "," not in str(arg) and SweepStore.exists(path):
        sweep = SweepStore.open(path)
        groups = []
        for cell in sweep.read().cells:
            # a reader: a run without a manifest yet is skipped, never cleaned up (that is the sweep's own job)
            runs = [
                RunScores.from_store(RunStore.open(sweep.run_path(entry.run_id)))
                for entry in cell.runs
                if entry.repeat != "static" and (sweep.run_path(entry.run_id) / MANIFEST).is_file()
            ]
            if runs:
                groups.append((cell.cell, runs))
        if not groups:
            raise ConfigError(f"{path}: the sweep has no run yet to gate")
        return groups
    runs = load_runs(arg)
    return [(group_name(runs), runs)]
