"""A sweep with planted refusals: one cell's target refuses exactly on the unanswerable probes, the other's refuses
everything. The refusal figures must separate the two as designed (recall 1 in both; precision 1 vs the share of
probes among turns; over-refusal 0 vs 1), in the sweep's tables and per turn index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragdive.analysis.summary import RunScores, summarize_by, summarize_run
from ragdive.cli.main import main
from ragdive.models import Message
from ragdive.report.sweep import write_sweep_report
from ragdive.store import RunStore
from ragdive.testing import offline

from .sweep_helpers import base_experiment

PROBE = "Which planet was the zeppelin built on?"
REFUSAL = "That is not in the knowledge base."
FIGURES = ["refused", "refusal_recall", "refusal_precision", "over_refusal"]


def probe_user(messages: list[Message], schema: type[BaseModel] | None) -> dict[str, Any]:
    """The offline user, asking a question no document answers when the turn is a probe."""
    draft = offline.user(messages)
    if schema is not None and schema.__name__ == "ProbeDraftOutput":
        draft.update(rag_input=PROBE, standalone_question=PROBE, ground_truth="not in the knowledge base", evidence=[])
    return draft


def refuse_on_probes(messages: list[Message]) -> str:
    return REFUSAL if "zeppelin" in messages[-1].content else "The first passage says so."


def refuse_always(messages: list[Message]) -> str:
    return REFUSAL


def test_refusal_figures_separate_a_target_that_refuses_probes_from_one_that_refuses_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import ragdive

    base = base_experiment(tmp_path)
    here = "tests.pipeline.test_refusal_sweep"
    base["models"]["user"] = {"model": "scripted/user", "options": {"responder": f"{here}:probe_user"}}
    base["simulation"].update(conversations=4, max_turns=4, unanswerable_rate=0.5)
    base["evaluation"]["metrics"] = FIGURES
    base["evaluation"]["pass_thresholds"] = {"over_refusal": "<= 0"}
    base["cache"]["enabled"] = False  # the cache keys on the model's name, and both cells' targets are scripted/target
    responders = [f"{here}:refuse_on_probes", f"{here}:refuse_always"]
    config = {"base": base, "axes": {"models.target.options.responder": responders}, "repeats": 2}
    result = ragdive.sweep(config, output=tmp_path / "sweep")
    assert set(result.runs.values()) == {"finished"}

    runs = {rid: RunScores.from_store(RunStore.open(tmp_path / "sweep" / "runs" / rid)) for rid in result.runs}
    turns = [t for r in runs.values() for c in r.conversations for t in c.turns]
    probes = [t for t in turns if t.unanswerable]
    assert 0 < len(probes) < len(turns) and all(t.index > 0 for t in probes)  # the plan planted some probes

    for rid, run in runs.items():
        means = {s.metric: s.mean for s in summarize_run(run, FIGURES)}
        n_turns = sum(len(c.turns) for c in run.conversations)
        n_probes = sum(t.unanswerable for c in run.conversations for t in c.turns)
        assert means["refusal_recall"] == 1.0  # both refuse every probe
        if rid.startswith("c00"):  # refuses exactly the probes
            assert means["refusal_precision"] == 1.0 and means["over_refusal"] == 0.0
            assert means["refused"] == pytest.approx(n_probes / n_turns)
        else:  # refuses everything
            assert means["refusal_precision"] == pytest.approx(n_probes / n_turns)
            assert means["over_refusal"] == 1.0 and means["refused"] == 1.0
        by_turn = summarize_by(run, "turn", ["over_refusal"])["over_refusal"]
        assert by_turn["1"].n_scored == len(run.conversations)  # turn 1 is never a probe
        assert by_turn["1"].mean == (0.0 if rid.startswith("c00") else 1.0)

    rows = {(r["cell"], r["metric"]): r for r in result.tables["table4"]["rows"]}
    always = "models.target.options.responder=" + responders[1]
    assert rows[always, "over_refusal"]["mean"] == 1.0 and rows[always, "over_refusal"]["outside_band"]
    base_row = {r["metric"]: r for r in result.tables["table2"]["rows"]}
    assert base_row["over_refusal"]["mean"] == 0.0 and base_row["refusal_recall"]["mean"] == 1.0
    directions = {m["name"]: m["direction"] for m in result.tables["metrics"]}
    assert directions["over_refusal"] == "lower" and directions["refusal_recall"] == "higher"

    # pass^k with "no answerable turn refused": every document passes every repeat in one cell, none in the other
    pass_rows = {(r["cell"], r["k"]): r for r in result.tables["pass_k"]["rows"]}
    probes_only = "models.target.options.responder=" + responders[0]
    assert [pass_rows[probes_only, k]["value"] for k in (1, 2)] == [1.0, 1.0]
    assert [pass_rows[always, k]["value"] for k in (1, 2)] == [0.0, 0.0]
    assert result.tables["pass_k"]["thresholds"] == ["over_refusal <= 0"]
    assert (tmp_path / "sweep" / "pass_k.csv").read_text().startswith("cell,k,value,n_documents")
    page = write_sweep_report(tmp_path / "sweep").read_text()
    assert 'id="pass-k"' in page and "<polyline" in page and "over_refusal &lt;= 0" in page
    # compare of the two cells' repeats shows the same curve
    group = ",".join(str(tmp_path / "sweep" / "runs" / r) for r in ("c01-r0", "c01-r1"))
    capsys.readouterr()
    assert main(["compare", group]) == 0
    shown = capsys.readouterr().out
    assert "pass^k" in shown and "0.000 (n=4)" in shown
