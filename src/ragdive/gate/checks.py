"""Gate evaluation: each threshold rule and each allowed drop against a baseline becomes one Check, passed or not.

The numbers are the ones `run` and `compare` print: a run's mean and CI from `summarize_run`, repeats' mean of run
means and CI from `summarize_repeats`, a baseline's change and paired CI from `compare_configurations`.

A metric with no scored item has no value and fails its rule (unknown is not a pass). A drop against the baseline
fails only when it is larger than allowed *and* the paired test's 95 % CI of the difference lies wholly on the
worse side of 0: a drop the CI cannot tell from noise passes, and the check says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..analysis import MetricComparison, RunScores, compare_configurations, summarize_repeats, summarize_run
from ..config.gate import GateRule

WORST_SHOWN = 3


@dataclass(frozen=True)
class Worst:
    """A conversation that pulls the metric the wrong way: its id, its mean of the metric, and where it lives."""

    conversation_id: str
    value: float
    run_id: str


@dataclass
class Check:
    """One JUnit test case: a rule on a metric of one group of runs (one conversation, for per-conversation rules)."""

    group: str
    """The run (or the repeats of one configuration, or a sweep cell) checked."""
    metric: str
    rule: str
    """The rule as written (">= 0.9 per turn") or "drop <= 0.05 vs BASELINE"."""
    passed: bool
    value: float | None
    """The figure the rule was applied to (None: nothing scored)."""
    ci: tuple[float, float] | None = None
    n_scored: int = 0
    n_unscored: int = 0
    detail: str = ""
    """One line: why it failed, or what decided it."""
    conversation_id: str | None = None
    worst: list[Worst] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.metric} {self.rule}" + (f" [{self.conversation_id}]" if self.conversation_id else "")


@dataclass
class GateResult:
    checks: list[Check]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def _values(runs: Sequence[RunScores], metric: str) -> list[tuple[int, str, int | None, float]]:
    return [
        (i, s.conversation_id, s.turn_index, float(s.value))
        for i, r in enumerate(runs)
        for s in r.scores
        if s.metric == metric and s.value is not None
    ]


def worst_conversations(runs: Sequence[RunScores], metric: str, higher_is_better: bool) -> list[Worst]:
    """The conversations with the lowest mean of the metric (the highest, for a `<=` rule)."""
    per: dict[tuple[int, str], list[float]] = defaultdict(list)
    for i, cid, _, value in _values(runs, metric):
        per[(i, cid)].append(value)
    means = [(float(np.mean(v)), i, cid) for (i, cid), v in per.items()]
    means.sort(key=lambda t: (t[0] if higher_is_better else -t[0], t[1], t[2]))
    return [Worst(cid, mean, runs[i].run_id) for mean, i, cid in means[:WORST_SHOWN]]


def _overall(runs: Sequence[RunScores], metric: str) -> tuple[float | None, tuple[float, float] | None, int, int]:
    if len(runs) == 1:
        s = summarize_run(runs[0], [metric])[0]
        return s.mean, s.ci, s.n_scored, s.n_unscored
    r = summarize_repeats(list(runs), [metric])[0]
    return r.mean, r.ci, r.n_scored, r.n_unscored


def _by(runs: Sequence[RunScores], metric: str, level: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for i, cid, turn, value in _values(runs, metric):
        if level == "turn":
            if turn is not None:
                groups[f"turn {turn + 1}"].append(value)
        else:
            groups[cid if len(runs) == 1 else f"{runs[i].run_id}/{cid}"].append(value)
    return {k: float(np.mean(v)) for k, v in sorted(groups.items(), key=lambda kv: _natural(kv[0]))}


def _natural(key: str) -> tuple[str, int]:
    head, _, tail = key.rpartition(" ")
    return (head, int(tail)) if tail.isdigit() else (key, 0)


def _fmt(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.3f}"


def check_rule(group: str, runs: Sequence[RunScores], metric: str, rule: GateRule) -> list[Check]:
    """One check (per conversation rules: one per conversation) of ``rule`` on ``runs``."""
    if rule.at_least:
        return [_check_rate(group, runs, metric, rule)]
    mean, ci, n_scored, n_unscored = _overall(runs, metric)
    worst = worst_conversations(runs, metric, rule.higher_is_better)
    ns, nu = n_scored, n_unscored
    if n_scored == 0:
        why = f"no scored item ({n_unscored} unscored)" if n_unscored else "the metric was not scored in this run"
        return [Check(group, metric, str(rule), False, None, None, detail=why, worst=worst, n_scored=ns, n_unscored=nu)]
    if rule.level == "overall":
        ok = rule.holds(mean)  # type: ignore[arg-type]
        detail = f"mean {_fmt(mean)} {'meets' if ok else 'misses'} {rule}"
        return [
            Check(
                group,
                metric,
                str(rule),
                ok,
                mean,
                ci,
                detail=detail,
                worst=[] if ok else worst,
                n_scored=ns,
                n_unscored=nu,
            )
        ]
    values = _by(runs, metric, rule.level)
    if rule.level == "turn":
        missed = {k: v for k, v in values.items() if not rule.holds(v)}
        low = min(values.values()) if rule.higher_is_better else max(values.values())
        detail = (
            "every turn meets it"
            if not missed
            else "misses at " + ", ".join(f"{k} ({v:.3f})" for k, v in list(missed.items())[:6])
        )
        shown = worst if missed else []
        return [
            Check(group, metric, str(rule), not missed, low, ci, detail=detail, worst=shown, n_scored=ns, n_unscored=nu)
        ]
    return [
        Check(
            group,
            metric,
            str(rule),
            rule.holds(v),
            v,
            None,
            detail=f"conversation mean {v:.3f}",
            conversation_id=cid,
        )
        for cid, v in values.items()
    ]


def _check_rate(group: str, runs: Sequence[RunScores], metric: str, rule: GateRule) -> Check:
    """``in at least k of n repeats``: the rule (at its level) applied to each run alone; it must hold in at least
    k of them. Fewer runs than n cannot show the rate and fail (say so); more are held to the same share."""
    k, n = rule.at_least  # type: ignore[misc]
    inner = GateRule(rule.op, rule.threshold, rule.level)
    held = []
    for run in runs:
        per_run = check_rule(group, [run], metric, inner)
        held.append(all(c.passed for c in per_run))
    need = math.ceil(k * len(runs) / n)
    mean, ci, n_scored, n_unscored = _overall(runs, metric)
    if len(runs) < n:
        ok, detail = False, f"needs {n} repeats to judge 'at least {k} of {n}'; {len(runs)} given"
    else:
        ok = sum(held) >= need
        detail = f"holds in {sum(held)} of {len(runs)} repeats (needs {need})"
    worst = [] if ok else worst_conversations(runs, metric, rule.higher_is_better)
    return Check(group, metric, str(rule), ok, mean, ci, n_scored, n_unscored, detail, worst=worst)


def check_drop(
    group: str,
    baseline: Sequence[RunScores],
    candidate: Sequence[RunScores],
    metric: str,
    max_drop: float,
    *,
    baseline_name: str,
    lower_is_better: Collection[str] = (),
) -> Check:
    """The candidate's drop from the baseline (a rise, for a lower-is-better metric) against ``max_drop``."""
    cmp = compare_configurations(list(baseline), list(candidate), [metric], lower_is_better=lower_is_better)[0]
    return drop_verdict(group, cmp, candidate, max_drop, baseline_name=baseline_name, lower_is_better=lower_is_better)


def drop_verdict(
    group: str,
    cmp: MetricComparison,
    candidate: Sequence[RunScores],
    max_drop: float,
    *,
    baseline_name: str,
    lower_is_better: Collection[str] = (),
) -> Check:
    """`check_drop` on a comparison already made (`compare --fail-on-regression` reuses the table's)."""
    metric = cmp.metric
    rule = f"drop <= {max_drop:g} vs {baseline_name}"
    downwards = cmp.lower_is_better or metric in lower_is_better  # the comparison knows the runs' own declarations
    worse_sign = 1.0 if downwards else -1.0
    ns, nu = cmp.n_scored, cmp.n_unscored
    if cmp.change is None:
        why = "no scored item on one side: the drop is unknown"
        return Check(group, metric, rule, False, None, None, detail=why, n_scored=ns, n_unscored=nu)
    drop = worse_sign * cmp.change
    p = cmp.paired
    worst = worst_conversations(candidate, metric, not downwards)
    ci = p.ci
    if drop <= max_drop + 1e-12:
        return Check(
            group,
            metric,
            rule,
            True,
            drop,
            ci,
            detail=f"drop {drop:+.3f} within {max_drop:g}",
            n_scored=ns,
            n_unscored=nu,
        )
    if ci is None:
        detail = (
            f"drop {drop:+.3f} > {max_drop:g}; {p.n_pairs} shared pairs give no paired CI, so the drop alone decides"
        )
        return Check(group, metric, rule, False, drop, None, detail=detail, worst=worst, n_scored=ns, n_unscored=nu)
    # the CI of (candidate - baseline): wholly on the worse side of 0 means the drop is not noise
    beyond_noise = ci[1] < 0 if worse_sign < 0 else ci[0] > 0
    if not beyond_noise:
        detail = (
            f"drop {drop:+.3f} > {max_drop:g} but within the paired test's 95% CI of the change "
            f"[{ci[0]:+.3f}, {ci[1]:+.3f}] ({p.n_pairs} pairs): noise, passes"
        )
        return Check(group, metric, rule, True, drop, ci, detail=detail, n_scored=ns, n_unscored=nu)
    detail = (
        f"drop {drop:+.3f} > {max_drop:g}, outside noise: the paired 95% CI of the change "
        f"[{ci[0]:+.3f}, {ci[1]:+.3f}] ({p.n_pairs} pairs) excludes 0"
    )
    return Check(group, metric, rule, False, drop, ci, detail=detail, worst=worst, n_scored=ns, n_unscored=nu)


def evaluate_gate(
    groups: Sequence[tuple[str, Sequence[RunScores]]],
    rules: dict[str, list[GateRule]],
    *,
    baseline: tuple[str, Sequence[RunScores]] | None = None,
    max_drop: dict[str, float] | None = None,
    lower_is_better: Collection[str] = (),
) -> GateResult:
    """Every rule and every allowed drop, for each group (a run, repeats of one configuration, or a sweep cell)."""
    checks: list[Check] = []
    for group, runs in groups:
        for metric, metric_rules in rules.items():
            for rule in metric_rules:
                checks.extend(check_rule(group, runs, metric, rule))
        if baseline is not None:
            for metric, drop in (max_drop or {}).items():
                checks.append(
                    check_drop(
                        group,
                        baseline[1],
                        runs,
                        metric,
                        drop,
                        baseline_name=baseline[0],
                        lower_is_better=lower_is_better,
                    )
                )
    return GateResult(checks)
