"""The simulator is named: compared runs whose user, validator or judge differ in model, parameters or prompts are
flagged before their scores are compared (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.analysis.conversations import acceptance
from ragdive.analysis.simulator_setup import setup_differences
from ragdive.cli.main import main
from ragdive.records import Attempt, RoleSetup, Score, Verdict
from ragdive.report import write_report
from ragdive.store import RunStore
from tests.factories import make_conversation

USER = RoleSetup(model="openai/gpt-4o", params={}, prompt_profile="chat", prompts="aaaaaaaaaaaa")
VALIDATOR = RoleSetup(model="openai/gpt-4o-mini", params={"temperature": 0.0}, prompt_profile="chat", prompts="b" * 12)


def run(root: Path, name: str, roles: dict[str, RoleSetup]) -> str:
    store = RunStore.create(root, name=name, roles=roles)
    for i in range(3):
        conv = make_conversation(f"c{i}", turns=1).model_copy(update={"document_ids": [f"doc-{i}"]})
        store.append_conversation(conv)
        store.append_score(Score(conversation_id=conv.id, turn_index=0, metric="correctness", value=i / 2))
    return str(store.path)


def test_two_runs_whose_user_models_differ_print_the_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other_user = USER.model_copy(update={"model": "openai/gpt-4.1"})
    a = run(tmp_path, "a", {"user": USER, "validator": VALIDATOR})
    b = run(tmp_path, "b", {"user": other_user, "validator": VALIDATOR})
    assert main(["compare", a, b]) == 0
    printed = capsys.readouterr().out
    assert "warning: the user differs in model: openai/gpt-4o (a) vs openai/gpt-4.1 (b)" in printed
    assert "validator" not in printed.split("vs baseline")[0]  # the same validator is not flagged
    same = run(tmp_path, "c", {"user": USER, "validator": VALIDATOR})
    assert main(["compare", a, same]) == 0
    assert "warning" not in capsys.readouterr().out


def test_parameters_prompts_and_unrecorded_roles_are_named() -> None:
    hotter = VALIDATOR.model_copy(update={"params": {"temperature": 0.7}})
    other_prompts = USER.model_copy(update={"prompts": "cccccccccccc"})
    notes = setup_differences(
        [
            ("a", {"user": USER, "validator": VALIDATOR}),
            ("b", {"user": other_prompts, "validator": hotter}),
            ("old", {}),
        ]
    )
    assert notes == [
        "old: its manifest does not record the roles' models and prompts",
        "the user differs in prompts: aaaaaaaaaaaa (a) vs cccccccccccc (b)",
        "the validator differs in parameters: {temperature: 0.0} (a) vs {temperature: 0.7} (b)",
    ]
    assert setup_differences([("a", {"user": USER})]) == []


def test_simulator_fidelity_counts_drafts_failing_a_deterministic_check() -> None:
    conv = make_conversation("c", turns=2)
    turn = conv.turns[1]
    bad = Attempt(
        draft=turn.attempts[0].draft,
        verdict=Verdict(valid=False, reason="quote not found", checked_by="deterministic"),
    )
    llm = Attempt(draft=turn.attempts[0].draft, verdict=Verdict(valid=False, reason="wrong type", checked_by="llm"))
    conv.turns[1] = turn.model_copy(update={"attempts": [bad, llm, *turn.attempts]})
    a = acceptance(conv.turns)
    assert (a.drafts, a.deterministic_rejections, a.deterministic_rate) == (4, 1, 0.25)
    assert (a.first_try, a.turns) == (1, 2)


def test_the_report_names_the_simulator_and_shows_its_fidelity(tmp_path: Path) -> None:
    store = RunStore.open(Path(run(tmp_path, "a", {"user": USER, "validator": VALIDATOR})))
    html = write_report(store).read_text(encoding="utf-8")
    assert "setup: user" in html and "openai/gpt-4o; provider defaults; chat prompts aaaaaaaaaaaa" in html
    assert "openai/gpt-4o-mini; temperature=0.0; chat prompts bbbbbbbbbbbb" in html
    assert "Simulator fidelity" in html and "failed a deterministic check" in html


def test_the_sweep_report_warns_when_its_runs_simulator_differs(tmp_path: Path) -> None:
    from ragdive.report import write_sweep_report
    from tests.report_sweeps import REPORTED_RUN, write_sweep_dir

    sweep = write_sweep_dir(tmp_path)
    quiet = write_sweep_report(sweep).read_text(encoding="utf-8")
    assert "simulator-warning" not in quiet.split('<section id="table2"')[0]
    for run, user in ((REPORTED_RUN, USER), ("r-c0-1", USER.model_copy(update={"model": "openai/gpt-4.1"}))):
        RunStore.open(sweep / "runs" / run).update_manifest(roles={"user": user, "validator": VALIDATOR})
    html = write_sweep_report(sweep).read_text(encoding="utf-8")
    assert f"warning: the user differs in model: openai/gpt-4o ({REPORTED_RUN}) vs openai/gpt-4.1 (r-c0-1)" in html


def test_a_run_records_its_simulators_models_parameters_and_prompt_fingerprints(tmp_path: Path, capsys) -> None:
    from ragdive.simulation.fingerprints import prompt_fingerprint
    from tests.pipeline.helpers import write_experiment

    assert main(["run", str(write_experiment(tmp_path)), "--no-cache"]) == 0
    run_dir = Path(capsys.readouterr().out.strip().splitlines()[-1])
    roles = RunStore.open(run_dir).read_manifest().roles
    assert roles["user"].prompts == prompt_fingerprint("user", "chat") and roles["user"].params == {}
    assert roles["validator"].prompts == prompt_fingerprint("validator", "chat")
    assert roles["validator"].params == {"temperature": 0.0} == roles["judge"].params
    assert roles["user"].model == "scripted/user" and roles["judge"].prompts is None
