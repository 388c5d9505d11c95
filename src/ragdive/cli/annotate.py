"""`ragdive annotate export|import|summary`: human validation of a run (the paper's Table 1) and the judge's
calibration against the humans' labels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from .. import api
from ..analysis import Estimate
from .display import console, out

app = typer.Typer(
    help="Human validation: rating sheets out, ratings in, agreement and calibration.", no_args_is_help=True
)


@app.command("export")
def export_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    output: Path = typer.Option(..., "-o", "--output", help="sheet.xlsx or sheet.csv (one file per rater)."),
    sample: int = typer.Option(200, "--sample", help="Turns to sample (the paper rated 200)."),
    by: str = typer.Option(
        "turn", "--by", help="turn: stratified by turn number and question type; conversation: whole conversations."
    ),
    seed: int = typer.Option(1, "--seed", help="Same run and seed, same sample."),
    raters: int = typer.Option(2, "--raters", help="One sheet per rater (the paper had two)."),
    corpus: Path | None = typer.Option(None, "--corpus", help="The run's corpus, for the document excerpts."),
) -> None:
    """Write rating sheets: sampled turns with their document excerpt and the conversation so far, the
    dialogues they come from, yes/no cells per criterion, the criteria's definitions."""
    sheets = api.annotate_export(run, output, sample=sample, by=by, seed=seed, raters=raters, corpus=corpus)
    for note in sheets.notes:
        console.print(f"note: {note}", markup=False)
    for path in sheets.files:
        out.print(str(path), markup=False, soft_wrap=True)
    console.print(
        f"{sheets.turns} turns and {sheets.dialogues} dialogues for {len(sheets.raters)} rater(s)", markup=False
    )


@app.command("import")
def import_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    sheets: list[Path] = typer.Argument(..., help="Filled sheets (.xlsx, or the .csv files)."),
) -> None:
    """Store the ratings in the run's annotations.jsonl. Every bad cell is reported and then nothing is stored;
    importing a sheet again replaces its earlier ratings."""
    imported = api.annotate_import(run, sheets)
    if not imported.ratings:
        console.print("note: no ratings in these sheets (every rating cell is blank): nothing to import", markup=False)
        return
    out.print(
        f"imported {imported.ratings} ratings of {imported.items} items by {len(imported.raters)} rater(s): "
        f"{', '.join(imported.raters) or '-'}",
        markup=False,
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(e: Estimate | None) -> str:
    return "-" if e is None else f"{e.mean:.3f} [{e.low:.3f}, {e.high:.3f}]"


@app.command("summary")
def summary_cmd(
    run: Path = typer.Argument(..., help="Run directory."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of tables."),
    show: int = typer.Option(20, "--show", help="Disagreeing turns to list."),
) -> None:
    """Table 1 (share of yes per criterion, per rater and averaged), agreement between raters, where the humans
    and the validator disagree, and the judge's calibration against the humans' labels."""
    s = api.annotate_summary(run)
    if as_json:
        sys.stdout.write(json.dumps(s.to_json(), ensure_ascii=False, indent=2) + "\n")
        return
    v = s.validation
    table = Table(title=f"Human validation ({v.items} items, {len(v.raters)} raters)", box=box.SIMPLE)
    table.add_column("rater", no_wrap=True)
    for c in v.shares:
        table.add_column(c.criterion, justify="right", no_wrap=True)
    for rater in v.raters:
        table.add_row(rater, *(f"{_pct(c.by_rater[rater].share)} ({c.by_rater[rater].rated})" for c in v.shares))
    table.add_row("average", *(_pct(c.average) for c in v.shares))
    out.print(table)
    agree = Table(
        title="Agreement between raters (raw: items all raters agreed on / items rated twice)", box=box.SIMPLE
    )
    for name in ("criterion", "items", "raw", "cohen kappa", "kripp. alpha", "note"):
        agree.add_column(name, no_wrap=name != "note")
    for a in v.agreement:
        # every share with its denominator: "90 %" of 10 items and of 1,000 are different claims
        raw = "-" if a.raw is None else f"{_pct(a.raw)} ({round(a.raw * a.items)}/{a.items})"
        agree.add_row(a.criterion, str(a.items), raw, _num(a.kappa), _num(a.alpha), a.note)
    out.print(agree)
    if v.disagreements:
        out.print(f"Humans against the pipeline: {len(v.disagreements)} turns (majority of raters)", markup=False)
        for d in v.disagreements[:show]:
            out.print(
                f"  {d.conversation_id} turn {d.turn_index + 1}: {d.criterion} yes by {_pct(d.humans)} "
                f"of raters; {d.pipeline}",
                markup=False,
            )
        if len(v.disagreements) > show:
            out.print(f"  ... {len(v.disagreements) - show} more (--show, --json)", markup=False)
    else:
        out.print(
            "Humans against the pipeline: no turn the validator accepted was rejected by most raters", markup=False
        )
    for k in s.calibration:
        if k.disagreements:
            out.print(
                f"Judge against humans on {k.metric}: {len(k.disagreements)} of {k.labelled} labelled turns",
                markup=False,
            )
        for j in k.disagreements[:show]:
            turn = "" if j.turn_index is None else f" turn {j.turn_index + 1}"
            out.print(
                f"  {j.conversation_id}{turn}: judge {j.judge:.2f}, {k.criterion} yes by {_pct(j.humans)} of raters",
                markup=False,
            )
        if len(k.disagreements) > show:
            out.print(f"  ... {len(k.disagreements) - show} more (--show, --json)", markup=False)
        if not k.judged:
            out.print(
                f"{k.criterion}: labelled, but the run has no {k.metric} scores to calibrate (ragdive evaluate)",
                markup=False,
            )
    judged = [k for k in s.calibration if k.judged]
    if judged:
        cal = Table(
            title="Judge against humans (prediction-powered mean: judge on all items + human rectifier)", box=box.SIMPLE
        )
        for name in (
            "metric",
            "labelled",
            "judged",
            "agreement",
            "kappa",
            "judge mean [95% CI]",
            "human mean [95% CI]",
            "PPI mean [95% CI]",
        ):
            cal.add_column(name, no_wrap=True)
        for k in judged:
            cal.add_row(
                k.metric,
                str(k.labelled),
                str(k.judged),
                "-" if k.agreement is None else f"{_pct(k.agreement)} ({k.agreed}/{k.decided})",
                _num(k.kappa),
                _ci(k.judge),
                _ci(k.humans),
                _ci(k.ppi),
            )
        out.print(cal)
