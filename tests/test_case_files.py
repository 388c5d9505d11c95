"""One reader for DeepEval files: DeepEval's own camelCase serialization (model_dump(by_alias=True)) is accepted by
`ragdive import deepeval` and `ragdive static`, as snake_case is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdive.case_files import case_rows, snake_keys
from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.evaluation.static import load_static_dataset
from ragdive.store import RunStore


def test_snake_keys_changes_keys_only() -> None:
    row = snake_keys(
        {"actualOutput": "a", "retrievalContext": ["c"], "additionalMetadata": {"keepMe": 1}, "input": "q"}
    )
    assert row == {"actual_output": "a", "retrieval_context": ["c"], "additional_metadata": {"keepMe": 1}, "input": "q"}


def test_a_file_that_is_not_a_list_is_one_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"cases": []}')
    with pytest.raises(ConfigError, match="expected a JSON list of objects"):
        case_rows(bad)


def test_deepeval_camel_case_imports_and_asks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    test_case = pytest.importorskip("deepeval.test_case", reason="the deepeval extra is not installed")
    single = test_case.LLMTestCase(
        input="When did the museum open?",
        actual_output="It opened in 1954.",
        expected_output="The museum opened in 1954.",
        retrieval_context=["The harbour museum opened in 1954."],
    )
    dumped = [single.model_dump(by_alias=True, exclude_none=True)]
    assert "actualOutput" in dumped[0] and "retrievalContext" in dumped[0]  # what DeepEval writes
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(dumped), encoding="utf-8")
    assert main(["import", "deepeval", str(cases), "-o", str(tmp_path / "imported")]) == 0, capsys.readouterr().err
    (conversation,) = RunStore.open(tmp_path / "imported").current_conversations()
    turn = conversation.turns[0]
    assert turn.answer == "It opened in 1954." and [c.text for c in turn.contexts] == [
        "The harbour museum opened in 1954."
    ]
    assert turn.ground_truth == "The museum opened in 1954."
    (item,) = load_static_dataset(cases)  # the same file as a question set for `ragdive static`
    assert (item.question, item.answer) == ("When did the museum open?", "The museum opened in 1954.")

    conversational = test_case.ConversationalTestCase(
        turns=[
            test_case.Turn(role="user", content="When did it open?"),
            test_case.Turn(role="assistant", content="In 1954.", retrieval_context=["It opened in 1954."]),
        ],
        expected_outcome="The user learns the opening year.",
    )
    dialogues = tmp_path / "dialogues.json"
    dialogues.write_text(json.dumps([conversational.model_dump(by_alias=True, exclude_none=True)]), encoding="utf-8")
    assert main(["import", "deepeval", str(dialogues), "-o", str(tmp_path / "dialogues")]) == 0
    (talk,) = RunStore.open(tmp_path / "dialogues").current_conversations()
    assert [c.text for c in talk.turns[0].contexts] == ["It opened in 1954."]


def test_config_check_validates_personas_as_run_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.pipeline.helpers import write_experiment

    config = write_experiment(tmp_path, personas=["precise", "nosuchpersona"])
    assert main(["config", "check", str(config)]) == 2
    assert "unknown persona 'nosuchpersona'" in capsys.readouterr().err
    assert main(["config", "check", str(write_experiment(tmp_path))]) == 0
