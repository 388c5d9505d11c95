"""Gate rules, drops against a baseline, and the JUnit / Markdown writers, on runs built in memory."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ragdive.analysis import RunScores
from ragdive.config import EvaluationConfig
from ragdive.config.gate import bound_rules, metric_drops, parse_gate, parse_rule
from ragdive.errors import ConfigError
from ragdive.gate import evaluate_gate, junit_xml, markdown_summary
from ragdive.records import Score
from tests.factories import make_conversation


def run_of(name: str, values: dict[str, list[float | None]], metric: str = "correctness") -> RunScores:
    """Conversation id -> per-turn values; each conversation has its own seed document (d<id>)."""
    convs, scores = [], []
    for i, (cid, turn_values) in enumerate(values.items()):
        conv = make_conversation(cid, turns=len(turn_values), index=i).model_copy(update={"document_ids": [f"d{cid}"]})
        convs.append(conv)
        for t, v in enumerate(turn_values):
            if v is None:
                scores.append(Score.unscored(conversation_id=cid, metric=metric, reason="judge failed"))
            else:
                scores.append(Score(conversation_id=cid, turn_index=t, metric=metric, value=v))
    return RunScores(name, convs, scores, run_id=name)


def test_rule_sentences_parse_and_print_back() -> None:
    rule = parse_rule(">= 0.9 in at least 4 of 5 repeats")
    assert (rule.op, rule.threshold, rule.level, rule.at_least) == (">=", 0.9, "overall", (4, 5))
    assert str(parse_rule("<=0.2 per turn")) == "<= 0.2 per turn"
    assert parse_rule(">= 0.5 per conversation").level == "conversation"
    with pytest.raises(ValueError, match="cannot read gate rule"):
        parse_rule("at least 0.9")
    with pytest.raises(ValueError, match="K <= N"):
        parse_rule(">= 0.9 in at least 6 of 5 repeats")
    assert parse_gate({"correctness": [">= 0.8", ">= 0.6 per turn"]})["correctness"][1].level == "turn"
    assert bound_rules(["correctness=0.8 per turn"], ["forgetfulness=0.1"])["forgetfulness"][0].op == "<="
    with pytest.raises(ValueError, match="METRIC=VALUE"):
        bound_rules(["correctness"], [])
    assert metric_drops(["correctness=0.05"]) == {"correctness": 0.05}
    with pytest.raises(ValueError, match="DROP >= 0"):
        metric_drops(["correctness=-1"])


def test_the_experiment_rejects_an_unreadable_or_empty_gate() -> None:
    assert EvaluationConfig(gate={"correctness": ">= 0.9"}).gate_rules()["correctness"][0].threshold == 0.9
    with pytest.raises(ValueError, match="cannot read gate rule"):
        EvaluationConfig(gate={"correctness": "high"})
    with pytest.raises(ValueError, match="at least one metric"):
        EvaluationConfig(gate={})
    assert EvaluationConfig().gate_rules() == {}
    assert issubclass(ConfigError, Exception)


def test_overall_rule_uses_the_runs_mean_and_names_the_worst_conversations() -> None:
    run = run_of("r", {"a": [1.0, 1.0], "b": [0.0, 0.5], "c": [1.0, 0.5]})
    result = evaluate_gate([("r", [run])], parse_gate({"correctness": ">= 0.8"}))
    (check,) = result.checks
    assert not result.passed and check.value == pytest.approx(4 / 6)
    assert check.ci is not None and check.ci[0] <= check.value <= check.ci[1]
    assert [w.conversation_id for w in check.worst] == ["b", "c", "a"]
    assert evaluate_gate([("r", [run])], parse_gate({"correctness": ">= 0.6"})).passed


def test_unscored_or_missing_metric_fails_never_passes() -> None:
    run = run_of("r", {"a": [None], "b": [None]})
    (check,) = evaluate_gate([("r", [run])], parse_gate({"correctness": ">= 0"})).checks
    assert not check.passed and check.value is None and "no scored item (2 unscored)" in check.detail
    (missing,) = evaluate_gate([("r", [run])], parse_gate({"faithfulness": ">= 0"})).checks
    assert not missing.passed and "not scored" in missing.detail


def test_per_turn_and_per_conversation_rules() -> None:
    run = run_of("r", {"a": [1.0, 0.4], "b": [1.0, 0.6], "c": [0.9, 0.9]})
    (turns,) = evaluate_gate([("r", [run])], parse_gate({"correctness": ">= 0.7 per turn"})).checks
    assert not turns.passed and "turn 2 (0.633)" in turns.detail and turns.value == pytest.approx(0.6333, abs=1e-3)
    per_conv = evaluate_gate([("r", [run])], parse_gate({"correctness": ">= 0.75 per conversation"})).checks
    assert [(c.conversation_id, c.passed) for c in per_conv] == [("a", False), ("b", True), ("c", True)]


def test_rate_over_repeats() -> None:
    good = {"a": [1.0], "b": [0.9]}
    runs = [run_of(f"r{i}", good) for i in range(4)] + [run_of("r4", {"a": [0.0], "b": [0.0]})]
    rule = {"correctness": ">= 0.9 in at least 4 of 5 repeats"}
    (check,) = evaluate_gate([("cfg", runs)], parse_gate(rule)).checks
    assert check.passed and "holds in 4 of 5 repeats" in check.detail
    (strict,) = evaluate_gate([("cfg", runs)], parse_gate({"correctness": ">= 0.9 in at least 5 of 5 repeats"})).checks
    assert not strict.passed
    (short,) = evaluate_gate([("cfg", runs[:3])], parse_gate(rule)).checks
    assert not short.passed and "needs 5 repeats" in short.detail


def _paired(name: str, shift: float, noise: float, n: int = 30) -> RunScores:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.4, 0.9, n)
    jitter = np.random.default_rng(len(name)).normal(0, noise, n)
    values = np.clip(base + shift + jitter, 0, 1)
    return run_of(name, {f"c{i}": [float(v)] for i, v in enumerate(values)})


def test_a_drop_fails_only_outside_the_paired_ci() -> None:
    baseline = _paired("base", 0.0, 0.0)
    regressed = _paired("worse", -0.15, 0.01)
    noisy = run_of("noisy", {f"c{i}": [v] for i, v in enumerate([0.0, 1.0] * 15)})
    drops = {"correctness": 0.05}
    failed = evaluate_gate([("worse", [regressed])], {}, baseline=("base", [baseline]), max_drop=drops)
    (check,) = failed.checks
    assert not check.passed and "outside noise" in check.detail and check.value == pytest.approx(0.15, abs=0.02)
    # same pairing keys, large swings both ways: the mean moves more than 0.05 but the CI straddles 0
    base_flat = run_of("flat", {f"c{i}": [0.6] for i in range(30)})
    (noise,) = evaluate_gate([("noisy", [noisy])], {}, baseline=("flat", [base_flat]), max_drop=drops).checks
    assert noise.passed and "noise, passes" in noise.detail and noise.value == pytest.approx(0.1)
    fine = evaluate_gate([("same", [baseline])], {}, baseline=("base", [baseline]), max_drop=drops)
    assert fine.passed


def test_lower_is_better_metric_drop_is_a_rise() -> None:
    base = run_of("b", {f"c{i}": [0.1] for i in range(10)}, metric="forgetfulness")
    worse = run_of("w", {f"c{i}": [0.4 + 0.01 * i] for i in range(10)}, metric="forgetfulness")
    (check,) = evaluate_gate(
        [("w", [worse])], {}, baseline=("b", [base]), max_drop={"forgetfulness": 0.1}, lower_is_better={"forgetfulness"}
    ).checks
    assert not check.passed and check.value == pytest.approx(0.345)


def test_a_custom_metric_its_runs_declare_lower_is_better_drops_by_rising() -> None:
    """Without a registry entry: the runs' own config says `direction: lower` (a YAML rubric metric)."""
    declared = {"evaluation": {"custom_metrics": [{"name": "rambles", "direction": "lower"}]}}
    base = run_of("b", {f"c{i}": [0.1] for i in range(10)}, metric="rambles")
    worse = run_of("w", {f"c{i}": [0.4 + 0.01 * i] for i in range(10)}, metric="rambles")
    base.config = worse.config = declared
    (check,) = evaluate_gate([("w", [worse])], {}, baseline=("b", [base]), max_drop={"rambles": 0.1}).checks
    assert not check.passed and check.value == pytest.approx(0.345)


def test_junit_and_markdown_list_every_check() -> None:
    run = run_of("r", {"a": [1.0], "b": [0.2], "c": [0.9]})
    rules = parse_gate({"correctness": [">= 0.8", ">= 0.5 per conversation"]})
    result = evaluate_gate([("my run", [run])], rules)
    root = ET.fromstring(junit_xml(result))
    cases = root.findall(".//testcase")
    assert len(cases) == 4 and root.get("failures") == "2"
    failed = [c for c in cases if c.find("failure") is not None]
    assert {c.get("name") for c in failed} == {"correctness >= 0.8", "correctness >= 0.5 per conversation [b]"}
    message = failed[0].find("failure").get("message")  # type: ignore[union-attr]
    assert "correctness = 0.700" in message and "95% CI" in message
    md = markdown_summary(result)
    assert md.startswith("## ragdive gate: ❌ failed: 2 of 4 checks")
    assert md.count("\n| ❌ |") == 2 and md.count("\n| ✅ |") == 2
    assert "`b` (0.200)" in md
