"""A sweep config turned into cells (a base experiment with axis values set), each cell into its runs (repeats and
the static arm), and the dry run's estimate of model calls per role. Pure: nothing here builds a model or writes
a file, so `--dry-run` costs nothing and every mistake in the axes is found before the first call."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ExperimentConfig, load_config, validate_config
from ..config.overrides import set_path
from ..config.sweep import SweepConfig
from ..errors import ConfigError

STATIC = "static"
"""The repeat slot of a cell's static-arm run."""


@dataclass(frozen=True)
class Cell:
    index: int
    id: str
    """``path=value, path=value`` of the axes, in the sweep's axis order: what the tables call the cell."""
    axes: dict[str, Any]
    config: ExperimentConfig
    """The base experiment with this cell's values (repeat 0; a run sets its own)."""


@dataclass(frozen=True)
class PlannedRun:
    cell: Cell
    repeat: int | str
    """0..repeats-1, or STATIC for the cell's static-arm run."""

    @property
    def run_id(self) -> str:
        # deterministic, so a sweep killed between creating a run and recording it finds that run again by name
        return f"c{self.cell.index:02d}-{STATIC if self.repeat == STATIC else f'r{self.repeat}'}"

    @property
    def static(self) -> bool:
        return self.repeat == STATIC

    def config(self) -> ExperimentConfig:
        return self.cell.config.model_copy(update={"repeat": 0 if self.static else int(self.repeat)}, deep=True)


@dataclass(frozen=True)
class SweepPlan:
    sweep: SweepConfig
    cells: list[Cell]
    baseline: Cell

    @property
    def runs(self) -> list[PlannedRun]:
        """Repeat-major (every cell's repeat 0 first), so an interrupted sweep already has one run of each cell."""
        dynamic = [PlannedRun(c, r) for r in range(self.sweep.repeats) for c in self.cells]
        static = [PlannedRun(c, STATIC) for c in self.cells] if self.sweep.static else []
        return dynamic + static


def load_base(sweep: SweepConfig, sweep_file: Path | None) -> dict[str, Any]:
    """The base experiment as plain data (validated once, so a broken base is reported as the base)."""
    if isinstance(sweep.base, dict):
        base = validate_config(sweep.base, ExperimentConfig, source="sweep base")
    else:
        path = Path(sweep.base)
        if not path.is_absolute() and sweep_file is not None:
            path = sweep_file.parent / path
        base = load_config(path)
    return base.model_dump(mode="json", exclude_unset=True)


def _groups(sweep: SweepConfig) -> list[tuple[tuple[str, ...], list[tuple[Any, ...]]]]:
    """Axes as groups that vary together: a zip group, or one axis alone. In the sweep's axis order."""
    zipped = {p: tuple(g) for g in sweep.zip for p in g}
    out: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]] = []
    done: set[str] = set()
    for path in sweep.axes:
        if path in done:
            continue
        group = zipped.get(path, (path,))
        done.update(group)
        out.append((group, list(zip(*(sweep.axes[p] for p in group), strict=True))))
    return out


def _baseline_choice(sweep: SweepConfig, groups: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]]) -> list[int]:
    """Per group, the position of the baseline's values (default: the first)."""
    wanted = sweep.baseline or {}
    choice = []
    for paths, values in groups:
        named = [p for p in paths if p in wanted]
        if not named:
            choice.append(0)
            continue
        matches = [i for i, v in enumerate(values) if all(v[paths.index(p)] == wanted[p] for p in named)]
        if not matches:
            shown = ", ".join(f"{p}={wanted[p]!r}" for p in named)
            raise ConfigError(f"baseline {shown} is not one of the axis values")
        choice.append(matches[0])
    return choice


def cell_id(axes: dict[str, Any]) -> str:
    return ", ".join(f"{p}={v}" for p, v in axes.items())


def plan_sweep(sweep: SweepConfig, sweep_file: Path | None = None) -> SweepPlan:
    """Every cell, validated against the experiment schema: a value that does not fit names its axis."""
    base = load_base(sweep, sweep_file)
    groups = _groups(sweep)
    base_choice = _baseline_choice(sweep, groups)
    if sweep.design == "product":
        choices = list(itertools.product(*(range(len(values)) for _, values in groups)))
    else:
        choices = [tuple(base_choice)]
        for g, (_, values) in enumerate(groups):
            choices += [tuple(base_choice[:g]) + (i,) + tuple(base_choice[g + 1 :]) for i in range(len(values))]
        choices = list(dict.fromkeys(choices))
    cells = [_cell(n, base, groups, choice) for n, choice in enumerate(choices)]
    baseline = cells[choices.index(tuple(base_choice))]
    return SweepPlan(sweep, cells, baseline)


def _cell(
    index: int,
    base: dict[str, Any],
    groups: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]],
    choice: tuple[int, ...],
) -> Cell:
    axes = {p: values[i][k] for (paths, values), i in zip(groups, choice, strict=True) for k, p in enumerate(paths)}
    data = _deep_copy(base)
    for path, value in axes.items():
        set_path(data, path, value, what="axis")
    try:
        config = validate_config(data, ExperimentConfig, source="sweep cell")
    except ConfigError as exc:
        raise ConfigError(f"cell {cell_id(axes)} does not fit the experiment config:\n{exc}") from exc
    missing = [
        what
        for what, absent in (
            ("a corpus (corpus.path)", config.corpus is None),
            ("a target (the target section)", config.target is None),
            ("a judge (models.judge or models.default)", config.models.for_role("judge") is None),
        )
        if absent
    ]
    if missing:  # found now, not once per run after the first runs have spent their calls
        raise ConfigError(f"cell {cell_id(axes)}: a sweep's runs need {', '.join(missing)}")
    return Cell(index, cell_id(axes), axes, config)


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def estimate_calls(
    plan: SweepPlan, *, turn_metrics: int, conversation_metrics: int, static_items: int
) -> dict[str, tuple[int, int]]:
    """Per role, the (fewest, most) model calls the whole sweep can make before the cache serves anything: fewest
    when every draft is accepted at once, most when each turn uses every attempt. The judge is counted as one call
    per scored item and metric (ragdive's batched prompts can need fewer). ``static_items``: questions per
    static-arm run."""
    totals: dict[str, list[int]] = {}

    def add(role: str, low: int, high: int) -> None:
        pair = totals.setdefault(role, [0, 0])
        pair[0] += low
        pair[1] += high

    for run in plan.runs:
        cfg = run.cell.config
        target = cfg.target
        generator = cfg.models.for_role("target") is not None and getattr(target, "type", None) == "reference"
        per_answer = 1 + int(bool(getattr(target, "rewrite_query", False)))
        if run.static:
            if generator:
                add("target", static_items * per_answer, static_items * per_answer)
            add("judge", static_items * turn_metrics, static_items * turn_metrics)
            continue
        sim = cfg.simulation
        turns = sim.conversations * sim.max_turns
        add("user", turns, turns * sim.max_attempts)
        add("validator", turns, turns * sim.max_attempts)
        if generator:
            add("target", turns * per_answer, turns * per_answer)
        judged = turns * turn_metrics + sim.conversations * conversation_metrics
        add("judge", judged, judged)
    return {role: (low, high) for role, (low, high) in totals.items()}
