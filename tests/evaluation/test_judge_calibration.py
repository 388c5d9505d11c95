"""Planted judge bias: a scripted judge that calls a known share of wrong answers correct. The humans' labels on a
sample, through the real sheet round trip, give a prediction-powered mean that recovers the true mean within its
CI, while the plain judge mean (and its CI) does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ragdive.cli.main import main
from ragdive.evaluation import Evaluator, Judge
from ragdive.models import Message
from ragdive.store import RunStore
from tests.annotate_runs import RUN_ID, fill_xlsx
from tests.factories import make_conversation

from .scripted_judge import scripted_judge, section

pytest.importorskip("openpyxl", reason="the annotate extra (openpyxl) is not installed")


def biased_run(root: Path, conversations: int = 100, turns: int = 4) -> tuple[RunStore, dict[str, bool]]:
    """Answers are right on 3 of every 5 turns; on 1 of the other 2 the answer only sounds sure of itself."""
    store = RunStore.create(root, run_id=RUN_ID)
    truth: dict[str, bool] = {}
    k = 0
    for c in range(conversations):
        conv = make_conversation(f"conv-{c}", turns=turns, index=c)
        for i, t in enumerate(conv.turns):
            kind = k % 5
            answer = f"it is {t.ground_truth}" if kind < 3 else ("surely it is x" if kind == 3 else "no idea")
            conv.turns[i] = t.model_copy(update={"answer": answer})
            truth[f"{RUN_ID}/{conv.id}/t{i + 1}"] = kind < 3
            k += 1
        store.append_conversation(conv)
    return store, truth


def fooled_judge(messages: list[Message], schema: type[BaseModel] | None) -> Any:
    assert schema is not None and schema.__name__ == "CorrectnessVerdict"
    prompt = messages[-1].content
    truth, answer = section(prompt, "GROUND TRUTH"), section(prompt, "ANSWER")
    ok = truth.lower() in answer.lower() or answer.startswith("surely")  # a confident tone fools it
    return {"reason": "scripted", "correct": ok}


async def test_prediction_powered_mean_recovers_the_true_mean_the_judge_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, truth = biased_run(tmp_path / "runs")
    model, _ = scripted_judge(fooled_judge)
    await Evaluator(Judge(model), ["correctness"]).evaluate_run(store)
    true_mean = sum(truth.values()) / len(truth)
    judged = [s.value for s in store.current_scores() if s.metric == "correctness"]
    judge_mean = sum(v for v in judged if v is not None) / len(judged)
    assert true_mean == pytest.approx(0.6) and judge_mean == pytest.approx(0.8)  # the planted bias

    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "150", "--raters", "1"]) == 0
    fill_xlsx(
        sheet, lambda item, criterion: ("yes" if truth[item] else "no") if criterion == "answer_correct" else None
    )
    assert main(["annotate", "import", str(store.path), str(sheet)]) == 0
    capsys.readouterr()
    assert main(["annotate", "summary", str(store.path), "--json"]) == 0
    (cal,) = json.loads(capsys.readouterr().out)["calibration"]
    assert cal["metric"] == "correctness" and cal["labelled"] == 150 and cal["judged"] == 400
    judge, ppi = cal["judge"], cal["ppi"]
    assert judge["mean"] == pytest.approx(judge_mean)
    assert not judge["low"] <= true_mean <= judge["high"]  # the judge's own CI misses the truth
    assert ppi["low"] <= true_mean <= ppi["high"]  # the humans' rectifier brings it back
    assert abs(ppi["mean"] - true_mean) < abs(judge["mean"] - true_mean)
    labelled_wrong = sum(1 for item, ok in truth.items() if not ok) / len(truth)
    assert cal["agreement"] < 1 and 1 - cal["agreement"] < labelled_wrong  # it errs on part of the wrong ones

    fooled = {
        (c.id, t.index) for c in store.current_conversations() for t in c.turns if (t.answer or "").startswith("surely")
    }
    wrong = {(d["conversation_id"], d["turn_index"]) for d in cal["disagreements"]}
    assert wrong and wrong <= fooled and len(wrong) == round((1 - cal["agreement"]) * 150)

    assert main(["annotate", "summary", str(store.path)]) == 0
    text = capsys.readouterr().out
    assert f"Judge against humans on correctness: {len(wrong)} of 150 labelled turns" in text
    assert "PPI mean" in text and f"{ppi['mean']:.3f}" in text
