"""Steered conversations (simulation.plans): fixed turns and a prefix of real messages, the rest simulated with
full per-turn references; fixed turns reach the run files unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragdive import api
from ragdive.errors import ConfigError
from ragdive.models import Model, ScriptedModel
from ragdive.records import Context
from ragdive.simulation import DialogueSettings, Generator, Validator, run_dialogue
from ragdive.simulation.steering import load_plans
from ragdive.store import RunStore

from .helpers import EchoTarget, plan
from .test_stop_rule import ACCEPT, REJECT, offline_config, user_answer

FIXED_1 = {
    "rag_input": "When was the old harbour of Veldmark built?",
    "ground_truth": "It was built in 1632 by Dutch engineers.",
    "evidence": ["The old harbour of Veldmark was built in 1632 by Dutch engineers."],
    "type": "initial",
}
FIXED_4 = {"rag_input": "Thanks. And is the museum still open on Mondays?", "type": "clarification"}
SCRIPT = {"script": [FIXED_1, "simulate", {"simulate": "correct the assistant"}, FIXED_4]}
PREFIX = {
    "documents": ["harbour"],
    "prefix": [
        {"role": "user", "content": "Who built the harbour of Veldmark?"},
        {
            "role": "assistant",
            "content": "Dutch engineers built it.",
            "contexts": ["Built in 1632 by Dutch engineers."],
        },
        {"role": "user", "content": "and when?"},
        {"role": "assistant", "content": "In 1632."},
    ],
}


def write_plans(tmp_path: Path, plans: list[dict[str, Any]], suffix: str) -> Path:
    path = tmp_path / f"plans{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(p) + "\n" for p in plans))
    else:
        import yaml

        path.write_text(yaml.safe_dump({"plans": plans}))
    return path


async def steered(steps_plan: dict[str, Any], tmp_path: Path, validator_outputs: tuple[Any, ...] = (), **settings: Any):  # type: ignore[no-untyped-def]
    steps = load_plans(write_plans(tmp_path, [steps_plan], ".yaml")).for_documents(["harbour"])
    users = ScriptedModel("scripted/user", responder=user_answer)
    validators = ScriptedModel("scripted/validator", responder=lambda m: ACCEPT)
    validators.enqueue(*validator_outputs)
    target = EchoTarget()
    conversation_plan = plan()
    conversation_plan.steps = steps
    result = await run_dialogue(
        conversation_plan,
        generator=Generator(Model(users, role="user")),
        validator=Validator(Model(validators, role="validator")),
        target=target,
        settings=DialogueSettings(**{"max_turns": 5, **settings}),
    )
    return result, users, validators, target


async def test_a_script_mixes_fixed_turns_sent_as_written_with_simulated_ones(tmp_path: Path) -> None:
    result, users, validators, target = await steered(SCRIPT, tmp_path)
    turns = result.conversation.turns
    assert [t.origin for t in turns] == ["fixed", None, None, "fixed", None]
    assert [c[1] for c in target.calls][0] == FIXED_1["rag_input"] and target.calls[3][1] == FIXED_4["rag_input"]
    first, fourth = turns[0], turns[3]
    assert (first.rag_input, first.standalone_question, first.ground_truth, str(first.question_type)) == (
        FIXED_1["rag_input"],
        FIXED_1["rag_input"],
        FIXED_1["ground_truth"],
        "initial",
    )
    assert first.attempts[0].verdict.valid and not first.validator_overruled  # checked like a draft
    assert fourth.attempts == [] and fourth.ground_truth == "" and str(fourth.question_type) == "clarification"
    assert len(validators.calls) == 1 + 3  # the fixed turn with a ground truth and the three drafted turns
    # the simulated turns carry full references, and the instruction reached the user model on its turn only
    for t in (turns[1], turns[2], turns[4]):
        assert t.evidence and t.ground_truth and t.attempts
    assert turns[2].instruction == "correct the assistant" and turns[1].instruction is None
    assert "For turn 3, the user you play does this: correct the assistant" in users.calls[1].text
    assert "# The plan for this turn" not in users.calls[0].text + users.calls[2].text
    # the validator is told the plan's instruction on that turn alone (else it rejects a planned correction of a
    # right answer as off-persona, and the redraft drops the instruction: found by the capable-model check)
    planned = "The conversation's plan asked the user for this turn: correct the assistant."
    assert [planned in c.text for c in validators.calls] == [False, False, True, False]
    # the simulated user saw the fixed turn in its history
    assert f"Turn 1 - user: {FIXED_1['rag_input']}" in users.calls[0].text


async def test_a_rejected_fixed_turn_is_recorded_but_never_changed(tmp_path: Path) -> None:
    result, _, _, _ = await steered({"script": [FIXED_1]}, tmp_path, validator_outputs=(REJECT,), max_turns=2)
    first = result.conversation.turns[0]
    assert first.rag_input == FIXED_1["rag_input"] and first.validator_overruled and first.origin == "fixed"
    [rejection] = result.rejections
    assert rejection.turn_index == 0 and rejection.categories == ["not_standalone"]


async def test_a_prefix_is_recorded_as_given_and_told_to_the_target_as_history(tmp_path: Path) -> None:
    result, users, _, target = await steered(PREFIX, tmp_path, max_turns=3)
    turns = result.conversation.turns
    assert [t.origin for t in turns] == ["prefix", "prefix", None]
    assert [(t.rag_input, t.answer) for t in turns[:2]] == [
        ("Who built the harbour of Veldmark?", "Dutch engineers built it."),
        ("and when?", "In 1632."),
    ]
    assert turns[0].contexts == [Context(text="Built in 1632 by Dutch engineers.")] and turns[1].contexts == []
    assert turns[0].ground_truth == "" and turns[0].validator_overruled is None
    assert len(target.calls) == 1 and target.calls[0][2] == 4  # one call, after the prefix's four messages
    assert "Turn 2 - assistant: In 1632." in users.calls[0].text and "Write turn 3" in users.calls[0].text


async def test_fixed_turns_keep_the_probe_draws_of_the_turns_after_them(tmp_path: Path) -> None:
    plain, _, _, _ = await steered({"script": []}, tmp_path, unanswerable_rate=0.5)
    mixed, _, _, _ = await steered({"script": [FIXED_1, FIXED_4]}, tmp_path, unanswerable_rate=0.5)
    probes = [t.unanswerable for t in plain.conversation.turns]
    assert any(probes[2:]), probes  # the seed plants a probe after the fixed turns, or this shows nothing
    assert [t.unanswerable for t in mixed.conversation.turns][2:] == probes[2:]


def test_bad_plans_are_one_clear_line(tmp_path: Path) -> None:
    bad = write_plans(tmp_path, [{"script": [{"ground_truth": "no message"}]}], ".yaml")
    with pytest.raises(ConfigError, match=r"plans.yaml: plan 1: script"):
        load_plans(bad)
    odd = write_plans(tmp_path, [{"prefix": [{"role": "assistant", "content": "hi"}]}], ".jsonl")
    with pytest.raises(ConfigError, match="must alternate"):
        load_plans(odd)
    with pytest.raises(ConfigError, match="does not exist"):
        load_plans(tmp_path / "nowhere.yaml")


def test_a_scripted_and_a_prefix_plan_run_end_to_end_with_the_fixed_turns_unchanged(tmp_path: Path) -> None:
    plans = write_plans(tmp_path, [SCRIPT, PREFIX], ".jsonl")
    config = offline_config(tmp_path, plans=str(plans), max_turns=5, conversations=1)
    result = api.run(config)
    assert result.status == "finished", result.error
    [conversation] = RunStore.open(result.run_dir).current_conversations()
    line = json.loads((result.run_dir / "conversations.jsonl").read_text().splitlines()[0])
    # the corpus holds one document, "harbour": its own plan (the prefix) wins over the plan for all
    assert [t["origin"] for t in line["turns"]] == ["prefix", "prefix", None, None, None]
    assert [t["rag_input"] for t in line["turns"][:2]] == ["Who built the harbour of Veldmark?", "and when?"]
    assert line["turns"][0]["contexts"][0]["text"] == "Built in 1632 by Dutch engineers."
    assert all(t["evidence"] and t["ground_truth"] for t in line["turns"][2:])
    assert conversation.status == "finished"

    only_script = write_plans(tmp_path, [SCRIPT], ".yaml")
    (tmp_path / "second").mkdir()
    (tmp_path / "third").mkdir()
    config = offline_config(tmp_path / "second", plans=str(only_script), max_turns=5, conversations=1)
    result = api.run(config)
    assert result.status == "finished", result.error
    turns = json.loads((result.run_dir / "conversations.jsonl").read_text().splitlines()[0])["turns"]
    assert [t["origin"] for t in turns] == ["fixed", None, None, "fixed", None]
    assert (turns[0]["rag_input"], turns[0]["ground_truth"], turns[0]["question_type"]) == (
        FIXED_1["rag_input"],
        FIXED_1["ground_truth"],
        "initial",
    )
    assert (turns[3]["rag_input"], turns[3]["question_type"]) == (FIXED_4["rag_input"], "clarification")
    assert turns[2]["instruction"] == "correct the assistant"
    too_long = offline_config(tmp_path / "third", plans=str(only_script), max_turns=3)
    with pytest.raises(ConfigError, match=r"has 4 turns, more than max_turns \(3\)"):
        api.run(too_long)


def test_config_check_takes_the_steering_keys_and_reads_the_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragdive.cli.main import main

    (tmp_path / "kb").mkdir()
    plans = write_plans(tmp_path, [SCRIPT], ".yaml")
    cfg = tmp_path / "exp.yaml"
    body = (
        f"corpus: {{path: {tmp_path / 'kb'}}}\nmodels: {{user: scripted/u, validator: scripted/v}}\n"
        "target: {type: python, callable: json:dumps}\n"
        "simulation: {stop: satisfied, min_turns: 2, max_turns: 5, plans: PLANS}\n"
    )
    cfg.write_text(body.replace("PLANS", str(plans)))
    assert main(["config", "check", str(cfg)]) == 0
    assert "valid" in capsys.readouterr().out
    plans.write_text("plans:\n  - script: [{type: initial}]\n")
    assert main(["config", "check", str(cfg)]) == 2
    assert "plan 1: script" in capsys.readouterr().err
