"""A sweep: one base experiment, varied along axes (any dotted config path -> values), each cell repeated, and
optionally a static Q&A arm asked of every cell (the paper's Tables 2, 4 and 5 in one command)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ._base import Section


class StaticArmConfig(Section):
    """A static Q&A dataset asked of every cell once, scored with the single-turn metrics (the paper's SQuAD arm
    of Table 5)."""

    dataset: str
    """CSV or JSONL with question and answer columns (relative paths: from the current directory)."""
    limit: int | None = Field(default=None, ge=1)
    """Ask only the first N questions."""
    metrics: list[str] | None = None
    """Single-turn metrics to score; none given: the experiment's single-turn metrics (else all of them)."""


class SweepConfig(Section):
    """Loaded from YAML by `ragdive sweep`. Every cell is the base experiment with the cell's axis values set."""

    name: str | None = None
    """The sweep's name; its default folder is ``output_dir/<name>`` (else the YAML file's stem)."""
    base: str | dict[str, Any]
    """The base experiment: a path to its YAML (relative to the sweep file) or the experiment inline."""
    axes: dict[str, list[Any]] = Field(min_length=1)
    """Dotted config path -> the values it takes, e.g. ``target.history: [full, none, first, last:3]``."""
    zip: list[list[str]] = Field(default_factory=list)
    """Groups of axes that vary together (their value lists are paired by position, so they need equal lengths)
    instead of being crossed."""
    design: Literal["product", "one-at-a-time"] = "product"
    """product: every combination of the axes (zipped groups count as one axis); one-at-a-time: the baseline cell,
    then each axis's other values with every other axis at its baseline value (the paper's Table 4 ablations)."""
    baseline: dict[str, Any] | None = None
    """The baseline cell's axis values (missing axes: their first value). Default: the first value of each axis."""
    repeats: int = Field(default=1, ge=1)
    """Runs per cell; repeat i gets ``repeat: i`` (new samples on the same seed documents)."""
    static: StaticArmConfig | None = None
    """Optional static arm, asked once per cell."""
    concurrency: int = Field(default=1, ge=1)
    """Runs in flight at once (they share the model cache and the per-endpoint limiters)."""
    output_dir: str = "sweeps"
    """Folder that receives the sweep directory when ``-o`` is not given."""

    @field_validator("axes")
    @classmethod
    def _values(cls, axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for path, values in axes.items():
            if path in ("repeat", "output_dir"):
                why = "use repeats: N" if path == "repeat" else "runs go to the sweep directory's runs/"
                raise ValueError(f"axis {path}: the sweep sets it for every run ({why})")
            if not values:
                raise ValueError(f"axis {path}: give at least one value")
            if len({repr(v) for v in values}) != len(values):
                raise ValueError(f"axis {path}: a value is listed twice")
        return axes

    @model_validator(mode="after")
    def _groups(self) -> SweepConfig:
        seen: set[str] = set()
        for group in self.zip:
            for path in group:
                if path not in self.axes:
                    raise ValueError(f"zip names {path!r}, which is not one of the axes")
                if path in seen:
                    raise ValueError(f"zip names {path!r} twice")
                seen.add(path)
            if len({len(self.axes[p]) for p in group}) > 1:
                raise ValueError(f"zip {group}: zipped axes need value lists of the same length")
        for path in self.baseline or {}:
            if path not in self.axes:
                raise ValueError(f"baseline names {path!r}, which is not one of the axes")
        return self
