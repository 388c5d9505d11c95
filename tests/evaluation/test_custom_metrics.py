"""Rubric metrics declared in YAML (evaluation.custom_metrics): judged like the built-ins, with their version and a
fingerprint that follows the criterion, in the run, compare, the report and the exports."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from ragdive.cli.main import main
from ragdive.config import validate_config
from ragdive.errors import ConfigError
from ragdive.evaluation import Judge
from ragdive.evaluation.metrics import METRICS, configured_metrics, metric_info
from ragdive.evaluation.metrics.base import fingerprint
from tests.factories import make_conversation

from .scripted_judge import scripted_judge

CITES = {
    "name": "cites_source",
    "criterion": "The answer says which document each fact comes from.",
    "inputs": ["question", "answer", "contexts", "conversation"],
    "version": 3,
}
RAMBLES = {
    "name": "rambles",
    "level": "conversation",
    "criterion": "The assistant gives long answers that wander off the user's question.",
    "scale": "1-5",
    "direction": "lower",
    "inputs": ["ground_truth"],
}


@pytest.fixture(autouse=True)
def _forget_custom_metrics() -> Any:
    yield
    for name in ("cites_source", "rambles"):
        METRICS.remove(name)


def evaluation(*custom: dict[str, Any], **more: Any) -> Any:
    return validate_config({"evaluation": {"custom_metrics": list(custom), **more}}).evaluation


def test_declarations_are_checked_before_anything_runs() -> None:
    with pytest.raises(ConfigError, match=r"evaluation.custom_metrics\[0\].name: got 'Cites Source'"):
        evaluation({**CITES, "name": "Cites Source"})
    with pytest.raises(ConfigError, match="declared twice: cites_source"):
        evaluation(CITES, CITES)
    with pytest.raises(ConfigError, match=r"inputs\[1\]: got 'answr'"):
        evaluation({**CITES, "inputs": ["question", "answr"]})
    with pytest.raises(ConfigError, match=r"custom_metrics\[0\].scael: unknown field \(did you mean `scale`\?\)"):
        evaluation({**CITES, "scael": "1-5"})
    with pytest.raises(ConfigError, match="'correctness' is the name of a built-in metric"):
        configured_metrics(evaluation({**CITES, "name": "correctness"}))


def test_a_config_runs_its_custom_metrics_by_default_and_only_its_own() -> None:
    names = configured_metrics(evaluation(CITES, RAMBLES))
    assert names[-2:] == ["cites_source", "rambles"] and "correctness" in names
    assert configured_metrics(evaluation(CITES, RAMBLES, metrics=["rambles"])) == ["rambles"]
    assert "cites_source" not in configured_metrics(evaluation())  # registered earlier, not declared here
    with pytest.raises(ConfigError, match="rambles: not a turn metric"):
        configured_metrics(evaluation(RAMBLES, metrics=["rambles"]), kind="turn")


def test_the_fingerprint_follows_the_criterion_and_the_version_is_the_declared_one() -> None:
    configured_metrics(evaluation(CITES))
    first = metric_info("cites_source")
    configured_metrics(evaluation({**CITES, "criterion": "The answer names its sources, every one of them."}))
    second = metric_info("cites_source")
    assert first.version == second.version == 3
    assert fingerprint(first) != fingerprint(second) and len(fingerprint(second)) == 12


async def test_reason_first_scale_mapping_and_unscored_on_failure() -> None:
    configured_metrics(evaluation(CITES, RAMBLES))
    conversation = make_conversation(turns=2)
    asked: list[str] = []

    def judge_reply(messages: Any, schema: Any) -> Any:
        asked.append(messages[-1].content)
        if schema.__name__ == "RatingVerdict":
            return {"reason": "the second answer drifts", "rating": 2}
        return "not json at all"  # the yes/no metric's judge fails

    model, _ = scripted_judge(judge_reply)
    judge = Judge(model)
    turn_metric, conversation_metric = metric_info("cites_source").cls(), metric_info("rambles").cls()
    failed = await turn_metric.score(judge, conversation, conversation.turns[1])
    assert failed.value is None and failed.details.get("judge_failed") and "unusable" in (failed.unscored_reason or "")
    rated = await conversation_metric.score(judge, conversation)
    assert rated.value == 0.25 and rated.reason == "the second answer drifts" and rated.metric_version == 1
    turn_prompt, conversation_prompt = asked[0], asked[-1]
    # turns numbered from 1, as every prompt, analyze and the report number them
    assert CITES["criterion"] in turn_prompt and "judge turn 2, shown after them):\n--- Turn 1\n" in turn_prompt
    # the turn judged is named, after the earlier turns that are only its context
    assert turn_prompt.index("--- Turn 1") < turn_prompt.index("TURN 2, THE TURN TO JUDGE:\n\nQUESTION:\nquestion 1?")
    assert "RETRIEVED CONTEXTS:\n[1] " in turn_prompt and "GROUND TRUTH" not in turn_prompt
    assert turn_prompt.index('"reason"') < turn_prompt.index('"verdict"')
    assert "GROUND TRUTH: " in conversation_prompt and "--- Turn 2\n" in conversation_prompt


async def test_a_criterion_the_inputs_cannot_decide_is_unscored_not_guessed() -> None:
    """The judge may answer cannot_tell (the declaration shows it too little): unscored, kind undecidable, with the
    judge's reason; never a yes or a rating made up without the material."""
    configured_metrics(evaluation(CITES, RAMBLES))
    conversation = make_conversation(turns=2)

    def judge_reply(messages: Any, schema: Any) -> Any:
        field = "rating" if schema.__name__ == "RatingVerdict" else "verdict"
        return {"reason": "the documents are not shown", field: "cannot_tell"}

    judge = Judge(scripted_judge(judge_reply)[0])
    for score in (
        await metric_info("cites_source").cls().score(judge, conversation, conversation.turns[0]),
        await metric_info("rambles").cls().score(judge, conversation),
    ):
        assert score.value is None and score.unscored_kind == "undecidable"
        assert "could not decide" in (score.unscored_reason or "") and "documents are not shown" in (
            score.unscored_reason or ""
        )
        assert not score.details.get("judge_failed")  # not a failure to retry: the declaration needs other inputs


def write_experiment(root: Path, name: str, custom: list[dict[str, Any]]) -> Path:
    corpus = root / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "harbour.md").write_text("The harbour was built in 1870. It has two piers. Ferries leave hourly.\n")
    roles = {r: f"ragdive.testing.offline:{r}" for r in ("user", "validator", "judge")}
    models = "".join(f"  {r}: {{model: scripted/{r}, options: {{responder: '{w}'}}}}\n" for r, w in roles.items())
    config = root / f"{name}.yaml"
    config.write_text(
        f"name: {name}\noutput_dir: {root / 'runs'}\ncache: {{dir: {root / 'cache'}}}\nmodels:\n{models}"
        f"corpus: {{path: {corpus}}}\n"
        "simulation: {conversations: 2, max_turns: 2, personas: [precise], concurrency: 1}\n"
        "target: {type: python, callable: 'tests.pipeline.helpers:answer'}\n"
        f"evaluation: {{concurrency: 1, custom_metrics: {json.dumps(custom)}}}\n"
    )
    return config


def test_a_yaml_rubric_metric_is_in_the_run_compare_report_and_exports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for name in ("base", "candidate"):
        assert main(["run", str(write_experiment(tmp_path, name, [CITES, RAMBLES])), "--no-cache"]) == 0
        runs.append(max((tmp_path / "runs").iterdir(), key=lambda p: p.stat().st_mtime))
    output = capsys.readouterr().out
    assert "cites_source" in output and "rambles" in output  # the run's own summary table
    assert "lower is better: forgetfulness, rambles" in output  # the registry's, and the run's declared `lower`
    scores = [json.loads(line) for line in (runs[0] / "evaluations.jsonl").read_text().splitlines()]
    cites = [s for s in scores if s["metric"] == "cites_source"]
    rambles = [s for s in scores if s["metric"] == "rambles"]
    assert len(cites) == 4 and {s["metric_version"] for s in cites} == {3} and {s["value"] for s in cites} == {1.0}
    assert len(rambles) == 2 and {s["value"] for s in rambles} == {0.75}  # offline judge: rating 4 -> 0.75
    assert main(["compare", str(runs[0]), str(runs[1])]) == 0
    compared = capsys.readouterr().out
    assert "cites_source" in compared and "rambles (lower is better)" in compared  # declared `direction: lower`
    assert "cites_source (lower is better)" not in compared
    assert main(["compare", str(runs[0]), str(runs[1]), "--json"]) == 0
    (comparison,) = json.loads(capsys.readouterr().out)["comparisons"]
    directions = {m["metric"]: m["lower_is_better"] for m in comparison["metrics"]}
    assert directions["rambles"] is True and directions["cites_source"] is False
    assert "cites_source" in (runs[0] / "report.html").read_text()
    assert main(["export", str(runs[0]), "-o", str(tmp_path / "out"), "--format", "csv,deepeval"]) == 0
    with open(tmp_path / "out" / "turns.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["score_cites_source"] for r in rows} == {"1.0"}
    with open(tmp_path / "out" / "conversations.csv", newline="") as fh:
        assert {r["score_rambles"] for r in csv.DictReader(fh)} == {"0.75"}
    assert "cites_source" in (tmp_path / "out" / "deepeval_test_cases.json").read_text()
