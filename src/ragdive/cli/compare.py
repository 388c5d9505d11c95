"""`ragdive compare RUN_A RUN_B ...`: the first configuration is the baseline; each argument is one run or a
comma-separated group of repeated runs of one configuration (`a,b,c`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.table import Table

from ..analysis import MetricComparison, RunScores, compare_configurations, summarize_repeats
from ..analysis.pass_k import pass_k, thresholds_from_config
from ..analysis.simulator_setup import setup_differences
from ..api.results import lower_is_better
from ..errors import ConfigError
from ..store import RunStore
from .display import out


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def load_group(arg: str) -> list[RunScores]:
    paths = [p.strip() for p in arg.split(",") if p.strip()]
    if not paths:
        raise ConfigError(f"empty run group {arg!r}")
    return [RunScores.from_store(RunStore.open(Path(p))) for p in paths]


def group_name(runs: list[RunScores]) -> str:
    return runs[0].name + (f" (+{len(runs) - 1} repeats)" if len(runs) > 1 else "")


def print_repeats(name: str, runs: list[RunScores], metrics: list[str] | None) -> None:
    table = Table(title=f"{name}: {len(runs)} repeated runs", box=box.SIMPLE, pad_edge=False)
    for col in ("metric", "mean", "std", "min", "max", "95% CI (clustered)", "scored", "unscored"):
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    for s in summarize_repeats(runs, metrics):
        ci = f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]" if s.ci else "-"
        table.add_row(
            s.metric, _fmt(s.mean), _fmt(s.std), _fmt(s.min), _fmt(s.max), ci, str(s.n_scored), str(s.n_unscored)
        )
    out.print(table)


def print_pass_k(groups: list[list[RunScores]]) -> None:
    """pass^k of each group of repeats, with the thresholds of its runs' config (evaluation.pass_thresholds or
    the CI gate's); nothing when no group has repeats or thresholds."""
    rows = []
    for g in groups:
        thresholds = thresholds_from_config(g[0].config)
        if len(g) > 1 and thresholds:
            rows.append((group_name(g), pass_k(g, thresholds)))
    if not rows:
        return
    width = max(r.repeats for _, r in rows)
    table = Table(title="pass^k: share of seed documents passing in all k repeats", box=box.SIMPLE, pad_edge=False)
    for col in ("configuration", *(f"pass^{k}" for k in range(1, width + 1)), "thresholds"):
        table.add_column(col, justify="left" if col in ("configuration", "thresholds") else "right")
    for name, result in rows:
        values = [f"{_fmt(v)} (n={n})" for v, n in zip(result.values, result.n_documents, strict=True)]
        table.add_row(name, *values, *([""] * (width - len(values))), ", ".join(result.thresholds))
    out.print(table)


def _candidate_cell(c: MetricComparison) -> str:
    verdict = "" if c.better is None else (" better" if c.better else " worse")
    return f"{_fmt(c.mean)}{'*' if c.outside_band else ''}{(' ' + c.arrow) if c.arrow else ''}{verdict}"


def print_comparison(base: str, name: str, rows: list[MetricComparison]) -> None:
    table = Table(title=f"{name} vs baseline {base}", box=box.SIMPLE, pad_edge=False)
    cols = ("metric", "baseline", "band", "value", "change", "paired Δ", "95% CI of Δ", "p", "d_z", "pairs", "verdict")
    for col in cols:
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right", no_wrap=True)
    table.add_column("unscored", justify="right", no_wrap=True)
    for c in rows:
        p = c.paired
        band = f"{c.band[0]:.3f}–{c.band[1]:.3f}" if c.band else "-"
        change = f"{c.change:+.3f}" if c.change is not None else "-"
        ci = f"[{p.ci[0]:+.3f}, {p.ci[1]:+.3f}]" if p.ci else "-"
        metric = c.metric + (" (lower is better)" if c.lower_is_better else "")
        table.add_row(
            metric,
            _fmt(c.baseline_mean),
            band,
            _candidate_cell(c),
            change,
            "-" if p.mean_diff is None else f"{p.mean_diff:+.3f}",
            ci,
            _fmt(p.p_value, 4),
            _fmt(p.effect_size, 2),
            str(p.n_pairs),
            p.verdict,
            str(c.n_unscored),
        )
    out.print(table)
    if rows:
        shared = {"conversation": "questions", "turn": "turns (a replay and its source)"}
        out.print(f"pairs: shared {shared.get(rows[0].paired_on, 'seed documents')}")


def compare_cmd(
    runs: list[str] = typer.Argument(..., help="Runs to compare; the first is the baseline. `a,b,c` = repeats."),
    metrics: str | None = typer.Option(None, "--metrics", help="Comma-separated metric names (default: all)."),
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression", help="Exit 6 when a metric got worse outside the paired test's 95% CI."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparisons as JSON (schema ragdive.compare)."),
) -> None:
    """Compare configurations against the first: `*` = outside the baseline's min–max band over its repeats,
    ↑/↓ = an absolute change of 0.05 or more (better or worse for that metric), and a paired permutation test
    over shared seed documents (p, effect size).
    A single argument of repeats (`a,b,c`) shows their mean, std, min, max and CI. --fail-on-regression: a
    metric that got worse with the paired 95% CI of the change wholly on the worse side of 0 (or, with too few
    pairs for a CI, any drop) exits 6, as `ragdive gate --max-drop METRIC=0` would."""
    groups = [load_group(arg) for arg in runs]
    if len(groups) < 2 and len(groups[0]) < 2:
        raise ConfigError("compare needs a baseline and at least one other run (or repeats: a,b,c)")
    for note in setup_differences([(r.name, r.roles) for g in groups for r in g]):
        out.print(f"warning: {note}", markup=False, soft_wrap=True)
    wanted = [m.strip() for m in metrics.split(",")] if metrics else None
    if (as_json or fail_on_regression) and len(groups) < 2:
        raise ConfigError("--json and --fail-on-regression compare configurations: name a baseline and another")
    # each candidate against the baseline once (permutation tests): the table, the JSON and the verdict read it
    compared = [
        (cand, compare_configurations(groups[0], cand, wanted, lower_is_better=lower_is_better()))
        for cand in groups[1:]
    ]
    if as_json:  # the JSON document alone on stdout
        _verdicts(groups[0], compared, as_json=True, fail_on_regression=fail_on_regression)
        return
    for g in groups:
        if len(g) > 1:
            print_repeats(group_name(g), g, wanted)
    print_pass_k(groups)
    base = groups[0]
    if len(base) < 2 and len(groups) > 1:
        out.print("note: the baseline has one run, so there is no min–max band (no `*` markers)", markup=False)
    for cand, rows in compared:
        print_comparison(group_name(base), group_name(cand), rows)
    if len(groups) > 1:
        out.print(
            "paired Δ: mean over the pairs of (value − baseline); p: two-sided sign-flip permutation "
            "test; verdict 'real' when p < 0.05 ('too few pairs' when 5 or fewer pairs could never reach it)",
            markup=False,
        )
    if fail_on_regression:
        _verdicts(base, compared, as_json=False, fail_on_regression=True)


def _verdicts(
    base: list[RunScores],
    compared: list[tuple[list[RunScores], list[MetricComparison]]],
    *,
    as_json: bool,
    fail_on_regression: bool,
) -> None:
    """The comparisons as JSON and/or the regression verdict (the numbers of the tables above)."""
    from ..gate import EXIT_GATE_FAILED, drop_verdict
    from ..records.outputs import CompareJson, ComparisonJson, Interval, MetricComparisonJson, PairedJson, dump

    comparisons, regressions, lines = [], [], []
    for cand, rows in compared:
        for c in rows:
            check = drop_verdict(
                group_name(cand), c, cand, 0.0, baseline_name=group_name(base), lower_is_better=lower_is_better()
            )
            if not check.passed and check.value is not None:
                regressions.append(f"{group_name(cand)}: {c.metric}")
                lines.append(f"regression: {group_name(cand)}: {c.metric}: {check.detail}")
        comparisons.append(
            ComparisonJson(
                baseline=group_name(base),
                candidate=group_name(cand),
                metrics=[
                    MetricComparisonJson(
                        metric=c.metric,
                        lower_is_better=c.lower_is_better,
                        baseline_mean=c.baseline_mean,
                        band=None if c.band is None else Interval(low=c.band[0], high=c.band[1]),
                        mean=c.mean,
                        change=c.change,
                        arrow=c.arrow,
                        better=c.better,
                        outside_band=c.outside_band,
                        n_scored=c.n_scored,
                        n_unscored=c.n_unscored,
                        paired=PairedJson(
                            n_pairs=c.paired.n_pairs,
                            mean_diff=c.paired.mean_diff,
                            ci=Interval.of(c.paired.ci),
                            p_value=c.paired.p_value,
                            effect_size=c.paired.effect_size,
                            verdict=c.paired.verdict,
                            paired_on=c.paired_on,
                        ),
                    )
                    for c in rows
                ],
            )
        )
    if as_json:
        print(dump(CompareJson(comparisons=comparisons, regressions=regressions if fail_on_regression else [])))
    else:
        for line in lines:
            out.print(line, markup=False, soft_wrap=True)
        out.print("no regression" if not lines else f"{len(lines)} regression(s)", markup=False)
    if fail_on_regression and regressions:
        raise typer.Exit(EXIT_GATE_FAILED)
