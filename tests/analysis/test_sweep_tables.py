"""A sweep's tables from stored scores: the paper's published Table 5 means give its arrows (absolute change of
0.05 against the baseline row of the same method), its Table 4 means its asterisks; the arrow rule parses."""

from __future__ import annotations

import pytest

from ragdive.analysis import RunScores
from ragdive.analysis.arrows import ArrowRule, better
from ragdive.analysis.sweep_tables import CellRuns, build_tables, tables_csv
from ragdive.errors import ConfigError
from ragdive.records import Score
from tests.factories import make_conversation

METRICS = ["context_retention", "forgetfulness", "correctness", "faithfulness", "context_precision", "context_recall"]
DIRECTIONS = {m: "lower" if m == "forgetfulness" else "higher" for m in METRICS}

# the paper's Table 5: DIVE (dynamic) per metric, then SQuAD (static) for the four single-turn metrics.
# "v" marks the values the paper prints with an arrow.
TABLE5 = {
    "baseline": ("1.00 0.07 0.96 0.61 0.67 0.78", "0.99 0.93 0.91 0.97"),
    "chunk size 500": ("0.98 0.10 0.95 0.60 0.69 0.80", "1.00 0.92 0.91 0.97"),
    "chunks 1": ("1.00 0.09 0.93 0.44v 0.57v 0.59v", "0.95 0.85v 0.86v 0.85v"),
    "chunks 10": ("0.98 0.04 0.98 0.60 0.63 0.80", "0.99 0.94 0.87 0.98"),
    "bge-m3": ("0.99 0.08 0.96 0.61 0.48v 0.79", "0.98 0.89 0.66v 0.95"),
    "bge-small": ("1.00 0.08 0.97 0.58 0.63 0.75", "0.98 0.93 0.90 0.96"),
    "jina reranker": ("0.87v 0.38v 0.86v 0.59 0.60v 0.75", "0.92v 0.88v 0.79v 0.94"),
}


def _run(name: str, values: dict[str, float]) -> RunScores:
    conv = make_conversation(f"{name}-c", turns=1)
    scores = [Score(conversation_id=conv.id, metric=m, value=v, turn_index=0) for m, v in values.items()]
    return RunScores(name, [conv], scores)


def _parse(text: str, metrics: list[str]) -> tuple[dict[str, float], set[str]]:
    values, marked = {}, set()
    for metric, token in zip(metrics, text.split(), strict=True):
        values[metric] = float(token.rstrip("v"))
        if token.endswith("v"):
            marked.add(metric)
    return values, marked


def test_the_papers_table_5_means_give_its_arrows() -> None:
    cells, dynamic_marks, static_marks = [], {}, {}
    for name, (dive, squad) in TABLE5.items():
        dyn, dynamic_marks[name] = _parse(dive, METRICS)
        sta, static_marks[name] = _parse(squad, METRICS[2:])
        cells.append(
            CellRuns(name, {"config": name}, runs=[(f"{name}-r0", _run(name, dyn))], static=(name, _run(name, sta)))
        )
    tables = build_tables("paper", cells, "baseline", directions=DIRECTIONS)
    rows = tables["table5"]["rows"]
    assert len(rows) == len(TABLE5) * len(METRICS)
    for row in rows:
        cell, metric = row["cell"], row["metric"]
        assert bool(row["arrow"]) == (metric in dynamic_marks[cell]), (cell, metric, row)
        assert bool(row["static_arrow"]) == (metric in static_marks[cell]), (cell, metric, row)
    by = {(r["cell"], r["metric"]): r for r in rows}
    # the pairs the paper's rule turns on: 0.67 -> 0.63 and 0.07 -> 0.10 carry none, 0.93 -> 0.88 does
    assert by[("chunks 10", "context_precision")]["arrow"] == ""
    assert by[("chunk size 500", "forgetfulness")]["arrow"] == ""
    assert by[("jina reranker", "faithfulness")]["static_arrow"] == "↓"
    assert by[("jina reranker", "faithfulness")]["static_better"] is False
    # forgetfulness up is the regression, context retention down too
    jina_forgets = by[("jina reranker", "forgetfulness")]
    assert jina_forgets["arrow"] == "↑" and jina_forgets["better"] is False
    assert by[("jina reranker", "context_retention")]["better"] is False
    # multi-turn metrics have no static value; the baseline row carries no arrows
    assert by[("baseline", "forgetfulness")]["static"] is None
    assert not any(r["arrow"] or r["static_arrow"] for r in rows if r["cell"] == "baseline")
    assert by[("baseline", "faithfulness")]["dynamic"] == pytest.approx(0.61)
    assert by[("baseline", "faithfulness")]["static"] == pytest.approx(0.93)  # 0.32 apart, and no arrow

    # a relative 5 % rule would mark changes the paper leaves unmarked (0.07 -> 0.10 is +43 %)
    relative = build_tables("paper", cells, "baseline", directions=DIRECTIONS, rule=ArrowRule.parse("relative:5%"))
    rel = {(r["cell"], r["metric"]): r for r in relative["table5"]["rows"]}
    assert rel[("chunk size 500", "forgetfulness")]["arrow"] == "↑" and relative["arrow_rule"] == "relative:5%"


# the paper's Table 4: the baseline's min and max over its repeats, then each modification; "*" = outside
TABLE4_BASE = ("0.96 0.06 0.94 0.94 0.72 0.91", "1.00 0.12 0.98 0.96 0.78 0.96")
TABLE4 = {
    "no history": "0.73* 0.63* 0.85* 0.93* 0.43* 0.57*",
    "initial turn": "0.91* 0.19* 0.95 0.95 0.76 0.94",
    "last 3 turns": "0.99 0.06 0.97 0.95 0.77 0.95",
    "1 context": "0.99 0.16* 0.90* 0.85* 0.65* 0.60*",
    "3 contexts": "0.97 0.11 0.96 0.96 0.78 0.88*",
}
# Table 4's metric order: retention, forgetfulness, correctness, faithfulness, precision, recall. The paper prints
# "no history" faithfulness 0.93 without `*` against a band minimum of 0.94: at two decimals that is outside, so
# its unrounded values must have been within; from the printed figures the rule can only star it.


def _stars(text: str) -> tuple[dict[str, float], set[str]]:
    values, starred = {}, set()
    for metric, token in zip(METRICS, text.split(), strict=True):
        values[metric] = float(token.rstrip("*"))
        if token.endswith("*"):
            starred.add(metric)
    return values, starred


def test_the_papers_table_4_means_give_its_asterisks_and_table_2_its_band() -> None:
    low, high = (dict(zip(METRICS, map(float, t.split()), strict=True)) for t in TABLE4_BASE)
    middle = {m: (low[m] + high[m]) / 2 for m in METRICS}
    base = CellRuns("baseline", {}, runs=[(f"b{i}", _run(f"b{i}", v)) for i, v in enumerate((low, middle, high))])
    cells, starred = [base], {}
    for name, text in TABLE4.items():
        values, starred[name] = _stars(text)
        cells.append(CellRuns(name, {}, runs=[(name, _run(name, values))]))
    tables = build_tables("paper", cells, "baseline", directions=DIRECTIONS)
    assert "table5" not in tables  # no static arm
    t2 = {r["metric"]: r for r in tables["table2"]["rows"]}
    assert t2["correctness"]["min"] == pytest.approx(0.94) and t2["correctness"]["max"] == pytest.approx(0.98)
    assert t2["correctness"]["n"] == 3 and t2["correctness"]["std"] == pytest.approx(0.02)
    for row in tables["table4"]["rows"]:
        assert row["outside_band"] == (row["metric"] in starred[row["cell"]]), row
    csv = tables_csv(tables)
    assert set(csv) == {"table2.csv", "table4.csv"}
    assert csv["table4.csv"].splitlines()[0] == "cell,metric,mean,band_min,band_max,outside_band"


def test_one_baseline_run_has_no_band_and_nothing_is_starred() -> None:
    base = CellRuns("b", {}, runs=[("b0", _run("b0", {"correctness": 0.5}))])
    other = CellRuns("o", {}, runs=[("o0", _run("o0", {"correctness": 0.9}))])
    (row,) = build_tables("s", [base, other], "b", directions={})["table4"]["rows"]
    assert row["band_min"] is None and row["outside_band"] is False and row["mean"] == pytest.approx(0.9)


def test_arrow_rules_parse_and_mark() -> None:
    assert str(ArrowRule.parse("absolute:0.05")) == "absolute:0.05" == str(ArrowRule())
    rel = ArrowRule.parse("relative:5%")
    assert rel == ArrowRule.parse("relative:0.05") and str(rel) == "relative:5%"
    assert rel.arrow(0.50, 0.52) == "" and rel.arrow(0.50, 0.53) == "↑" and rel.arrow(0.0, 0.0) == ""
    assert ArrowRule().arrow(0.97, 0.92) == "↓" and ArrowRule().arrow(None, 0.5) == ""
    for bad in ("absolute", "relative:-1", "absolute:5%", "sideways:0.1", "absolute:0"):
        with pytest.raises(ConfigError):
            ArrowRule.parse(bad)
    assert better("↑", "lower") is False and better("↓", "lower") is True and better("", "higher") is None


def test_the_tables_do_not_depend_on_the_order_scores_were_written_in() -> None:
    """Turns are judged while later ones are simulated, so which score line comes first is up to the judge's
    answers: two runs of the same scores written in other orders give the same metrics and tables."""
    conv = make_conversation("c", turns=2)
    scores = [
        Score(conversation_id=conv.id, metric=m, value=0.5, turn_index=t)
        for t in (0, 1)
        for m in ("faithfulness", "correctness")
    ] + [Score(conversation_id=conv.id, metric="forgetfulness", value=0.0, turn_index=None)]
    written, reordered = RunScores("a", [conv], scores), RunScores("a", [conv], scores[::-1])
    assert written.metrics() == reordered.metrics() == ["correctness", "faithfulness", "forgetfulness"]
    tables = [
        build_tables("s", [CellRuns("base", {}, [("r0", r)])], "base", directions=DIRECTIONS)
        for r in (written, reordered)
    ]
    assert tables[0] == tables[1]
