"""`ragdive gate` as one function: which rules (the command line's, else the ones the runs were configured with),
which runs, which baseline; the verdict. The API's `gate` and `run --gate` call it; the CLI prints what it returns."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..config.gate import GateRule, parse_gate
from ..errors import ConfigError
from ..store import RunStore
from .checks import GateResult, evaluate_gate
from .sources import first_run_dir, group_name, load_groups, load_runs

NO_GATE = (
    "no gate: give thresholds (--min METRIC=VALUE, --max METRIC=VALUE, or --baseline RUN with --max-drop "
    "METRIC=DROP), or set evaluation.gate in the experiment"
)


def configured_rules(run_dir: Path) -> dict[str, list[GateRule]]:
    """The `evaluation.gate` a run was configured with (its manifest keeps the config)."""
    config: dict[str, Any] = RunStore.open(run_dir).read_manifest().config or {}
    spec = (config.get("evaluation") or {}).get("gate")
    if not spec:
        return {}
    try:
        return parse_gate(spec)
    except ValueError as exc:
        raise ConfigError(f"{run_dir}: {exc}") from None


def gate_runs(
    target: str | Path,
    *,
    rules: dict[str, list[GateRule]] | None = None,
    baseline: str | Path | None = None,
    max_drop: dict[str, float] | None = None,
    lower_is_better: Collection[str] = (),
) -> GateResult:
    """Check ``target`` (a run, ``a,b,c`` repeats, or a sweep: one group per cell). ``rules`` None or empty: the
    rules of the runs' own `evaluation.gate`; none anywhere and no drop to check is a ConfigError."""
    groups = load_groups(target)
    wanted = dict(rules or {})
    if not wanted:
        wanted = configured_rules(first_run_dir(target))
    if max_drop and baseline is None:
        raise ConfigError("--max-drop needs --baseline RUN (the run the drop is measured from)")
    if baseline is not None and not max_drop:
        raise ConfigError("--baseline needs --max-drop METRIC=DROP (how much of a drop is allowed)")
    if not wanted and not max_drop:
        raise ConfigError(NO_GATE)
    base = None
    if baseline is not None:
        base_runs = load_runs(baseline)
        base = (group_name(base_runs), base_runs)
    return evaluate_gate(groups, wanted, baseline=base, max_drop=max_drop, lower_is_better=lower_is_better)
