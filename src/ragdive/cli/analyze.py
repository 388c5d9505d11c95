"""`ragdive analyze RUN...`: the conversation analyses (flow, uniqueness, rejections, lapses, per-turn curves).

Several runs are repeats of one plan: uniqueness compares their questions on the same seed documents, and the other
analyses pool their conversations. `--json` prints exactly the library's results (what a report must show);
`--csv` prints the same numbers in long form (group, path, value).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.table import Table

from .. import api
from ..analysis.conversations import (
    DEFAULT_METHOD,
    ConversationAnalysis,
    Uniqueness,
    UniquenessCalibration,
    calibrate,
    flatten,
    read_labels,
    to_data,
)
from ..api.analyses import same_question_test
from ..errors import ConfigError
from ..records import ModelSpend
from ..sync_edge import run_loop
from .display import console, out
from .options import (
    ANALYSIS_JUDGE,
    BELOW,
    CACHE_DIR,
    JUDGE_ALIAS,
    NO_CACHE,
    THRESHOLD,
    UNIQUENESS_HELP,
    judge_model,
)
from .themes import parse_below, print_themes


def print_judge_spend(spend: list[ModelSpend]) -> None:
    """What the judge was asked for, on stderr (one line; nothing without a judge)."""
    if not spend:
        return
    sent = sum(s.calls for s in spend)
    cached = sum(s.cached_calls for s in spend)
    tokens = sum(s.prompt_tokens + s.completion_tokens for s in spend)
    costs = [s.cost_usd for s in spend]
    cost = "unknown" if any(c is None for c in costs) else f"${sum(c or 0.0 for c in costs):.4f}"
    console.print(f"judge: {sent} requests sent, {cached} from the cache, {tokens} tokens, cost {cost}", markup=False)


def analyze_cmd(
    runs: list[Path] | None = typer.Argument(None, help="Run directories; several runs of one plan are repeats."),
    by: str | None = typer.Option(None, "--by", help="Also analyse each persona separately: --by persona."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of tables."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV rows (group, path, value) instead of tables."),
    uniqueness: str = typer.Option(DEFAULT_METHOD, "--uniqueness", help=UNIQUENESS_HELP),
    threshold: float | None = THRESHOLD,
    model: list[str] = ANALYSIS_JUDGE,
    themes: bool = typer.Option(
        False,
        "--themes",
        help="Cluster low-scoring items into failure themes (bundled embedder; --model judge=... labels them).",
    ),
    below: list[str] = BELOW,
    judge: str | None = JUDGE_ALIAS,
    no_cache: bool = NO_CACHE,
    cache_dir: Path | None = CACHE_DIR,
    calibrate_uniqueness: Path | None = typer.Option(
        None,
        "--calibrate-uniqueness",
        help="Human duplicate labels (CSV or JSONL: document, turn, run, text, same_as_runs): print the "
        "--uniqueness method's best threshold and its agreement with them, instead of analysing runs.",
    ),
) -> None:
    """Question-type flow, uniqueness of questions across repeats, validator rejections, forgetfulness and
    retention lapses, and per-turn metric curves. Turns are numbered from 1."""
    if as_json and as_csv:
        raise ConfigError("choose one of --json and --csv")
    if calibrate_uniqueness is not None:
        calibrate_cmd(calibrate_uniqueness, uniqueness, as_json=as_json)
        return
    if not runs:
        raise ConfigError("name at least one run directory (or --calibrate-uniqueness LABELS)")
    judge = judge_model(model, judge, "analyze")
    if below and not themes:
        raise ConfigError("--below is for --themes")
    result = run_loop(
        api.aanalyze(
            runs,
            by=by,
            uniqueness=uniqueness,
            threshold=threshold,
            judge=judge,
            themes=themes,
            below=parse_below(below),
            no_cache=no_cache,
            cache_dir=cache_dir,
        )
    )
    print_judge_spend(result.judge_spend)
    document = result.document()
    if as_json:
        sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    elif as_csv:
        write_csv(document["groups"])
    else:
        for name, analysis in result.groups.items():
            print_analysis(name, analysis, len(result.runs))
        if result.themes is not None:
            print_themes(result.themes)


def calibrate_cmd(labels: Path, method: str, *, as_json: bool) -> None:
    """`--calibrate-uniqueness LABELS`: the method's best threshold on the user's own duplicate labels."""
    if method == "exact":
        raise ConfigError("--calibrate-uniqueness: exact text has no threshold; use --uniqueness overlap or embedding")
    embed, _ = same_question_test(method, None)
    assert embed is not None
    result = calibrate(read_labels(labels), embed, method=method)
    if as_json:
        data = to_data(result)
        data["at"] = list(data["at"].values())  # thresholds as rows, not as string keys
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    print_calibration(result)


def print_calibration(c: UniquenessCalibration) -> None:
    b = c.best
    kappa = "-" if b.kappa is None else f"{b.kappa:.3f}"
    out.print(
        f"uniqueness calibration ({c.method}): {c.questions} questions, {c.pairs} pairs of runs at the same document "
        f"and turn, {c.same_pairs} labelled the same",
        markup=False,
    )
    out.print(
        f"best threshold {b.threshold:g}: kappa {kappa}, pairs decided as labelled {b.agreement:.1%}, "
        f"largest per-turn share gap {b.largest_share_gap:.3f}",
        markup=False,
    )
    table = _table("unique share per turn", ["turn", "labels", f"at {b.threshold:g}"])
    for turn, share in c.human_shares.items():
        table.add_row(str(turn), f"{share:.3f}", f"{b.shares[turn]:.3f}")
    out.print(table)


def write_csv(groups: dict[str, Any]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["group", "path", "value"])
    for group, data in groups.items():
        for path, value in flatten(data):
            writer.writerow([group, path, "" if value is None else value])


# -- terminal display (small functions, so a shared display module can take them over) ---------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(title: str, columns: list[str]) -> Table:
    table = Table(title=title, box=box.SIMPLE, pad_edge=False, title_justify="left")
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
    return table


def print_analysis(name: str, a: ConversationAnalysis, n_runs: int) -> None:
    out.print(f"[bold]{name}[/]: {a.conversations} conversations from {n_runs} run(s)")
    print_flow(a)
    print_lengths(a)
    print_uniqueness(a.uniqueness)
    if a.uniqueness_judge is not None:
        print_uniqueness(a.uniqueness_judge)
    print_rejections(a)
    print_lapses(a)
    print_curves(a)


def print_flow(a: ConversationAnalysis) -> None:
    types = list(a.flow.overall.counts)
    table = _table("question types per turn", ["turn", "n", *types])
    rows = [(str(k), v) for k, v in a.flow.per_turn.items()]
    for label, shares in [*rows, ("all", a.flow.overall), ("turns 2+", a.flow.after_first)]:
        cells = [f"{_pct(shares.shares[t])} ({shares.counts[t]})" for t in types]
        table.add_row(label, str(shares.n), *cells)
    out.print(table)


def print_lengths(a: ConversationAnalysis) -> None:
    lengths = a.lengths
    if lengths is None or not lengths.conversations:
        return
    stops = [stop for stop, n in lengths.stops.items() if n]  # the stops that occurred
    title = f"conversation length (mean {_fmt(lengths.mean)} turns, median {lengths.median:g})"
    table = _table(title, ["turns", "conversations", *(f"stop: {s}" for s in stops)])
    for turns, n in lengths.counts.items():
        table.add_row(str(turns), str(n), *(str(lengths.by_stop[s].get(turns, 0)) for s in stops))
    table.add_row("all", str(lengths.conversations), *(str(lengths.stops[s]) for s in stops))
    out.print(table)
    for reason in lengths.user_end_reasons[:5]:  # a few of the users' own words; --json has them all
        out.print(f"  user ended: {reason}", markup=False)


def print_uniqueness(u: Uniqueness) -> None:
    method = f"{u.method}, threshold {u.threshold}" if u.threshold is not None else u.method
    if u.undecided_pairs:
        method += f", {u.undecided_pairs} pairs undecided"
    if not u.per_turn:
        out.print(f"uniqueness ({method}): no seed documents with two or more conversations to compare", markup=False)
        return
    table = _table(f"unique questions across repeats ({method})", ["turn", "questions", "unique", "distinct", "share"])
    table.caption = f"{u.seed_sets} seed-document sets with repeats; 'all' share = mean of the turn shares"
    for t in u.per_turn.values():
        table.add_row(str(t.turn), str(t.questions), str(t.unique), str(t.distinct), _pct(t.share))
    table.add_row("all", str(u.questions), str(u.unique), str(u.distinct), _pct(u.average_share))
    out.print(table)


def print_rejections(a: ConversationAnalysis) -> None:
    r = a.rejections
    total = "unknown: no validator history recorded" if r.total is None else str(r.total)
    rate = "" if r.per_100_turns is None else f", {r.per_100_turns:.2f} per 100 turns"
    table = _table(f"validator rejections ({total}{rate})", ["category", "count", "share", "by turn", "by attempt"])
    for category, count in r.by_category.items():
        cells = [c for c in r.cells if c.category == category]
        turns: dict[int, int] = {}
        attempts: dict[int, int] = {}
        for c in cells:
            turns[c.turn] = turns.get(c.turn, 0) + c.count
            attempts[c.attempt] = attempts.get(c.attempt, 0) + c.count
        table.add_row(
            category,
            str(count),
            _pct(r.category_shares.get(category)),
            " ".join(f"t{k}:{v}" for k, v in sorted(turns.items())),
            " ".join(f"a{k}:{v}" for k, v in sorted(attempts.items())),
        )
    out.print(table)
    acc = _table("acceptance per turn", ["turn", "turns", "first try", "overruled"])
    for number, x in [*((str(k), v) for k, v in r.acceptance_per_turn.items()), ("all", r.acceptance)]:
        acc.add_row(
            number,
            str(x.turns),
            # no validator history (static or imported turns): unknown, not 0 %
            "unknown" if x.first_try_rate is None and x.unrecorded else f"{_pct(x.first_try_rate)} ({x.first_try})",
            "unknown" if x.overruled_share is None and x.unrecorded else f"{_pct(x.overruled_share)} ({x.overruled})",
        )
    out.print(acc)


def print_lapses(a: ConversationAnalysis) -> None:
    table = _table(
        "lapses (where information was lost)",
        ["metric", "scored", "with lapse", "lapses", "by turn", "by distance back", "unplaced"],
    )
    for s in a.lapses.values():
        table.add_row(
            s.metric,
            str(s.scored),
            _known(s.with_lapse, s.unattributed),
            _known(s.lapses, s.unattributed),
            " ".join(f"t{k}:{v}" for k, v in s.by_turn.items()) or "-",
            " ".join(f"{k}:{v}" for k, v in s.by_distance.items()) or "-",
            str(s.unplaced),
        )
    out.print(table)


def _known(count: int | None, unattributed: int) -> str:
    """A lapse count, "unknown" when no scored item carries an attribution, or with the items that carry none."""
    if count is None:
        return "unknown"
    return f"{count} (+{unattributed} unknown)" if unattributed else str(count)


def print_curves(a: ConversationAnalysis) -> None:
    if not a.curves:
        out.print("per-turn metrics: none scored", markup=False)
        return
    turns = sorted({p.turn for points in a.curves.values() for p in points})
    table = _table("per-turn metrics: mean [95% CI] (n)", ["metric", *(f"turn {t}" for t in turns)])
    for metric, points in a.curves.items():
        at = {p.turn: p for p in points}
        cells = []
        for t in turns:
            p = at.get(t)
            ci = f" [{p.ci[0]:.2f}, {p.ci[1]:.2f}]" if p and p.ci else ""
            cells.append("-" if p is None else f"{_fmt(p.mean)}{ci} ({p.n})")
        table.add_row(metric, *cells)
    out.print(table)
