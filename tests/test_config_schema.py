"""`ragdive config schema [--sweep]`: a JSON schema editors can read (field docs as descriptions, target types
from the registry), and the loader's "did you mean" for a misspelt field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ragdive.cli.main import main
from ragdive.config import TARGET_TYPES
from ragdive.demo import demo_config


def printed_schema(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["config", "schema", *args]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_experiment_schema_accepts_real_configs_and_refuses_mistakes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = printed_schema(capsys)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    demo = demo_config(tmp_path).model_dump(mode="json", exclude_none=True)
    assert list(validator.iter_errors(demo)) == []
    validator.validate({"target": {"type": "python", "callable": "m:f"}, "evaluation": {"metrics": ["correctness"]}})
    for wrong in (
        {"target": {"type": "htp", "url": "http://x"}},  # not a registered type
        {"target": {"type": "reference", "histroy": "full"}},  # misspelt field
        {"simulation": {"concurrency": 0}},  # out of range
    ):
        assert list(validator.iter_errors(wrong)), wrong
    mapping = schema["properties"]["target"]["anyOf"][0]["discriminator"]["mapping"]
    assert set(mapping) == set(TARGET_TYPES.names())  # the registry is the discriminator
    history = schema["$defs"]["ReferenceTargetConfig"]["properties"]["history"]
    assert "last:Nu" in history["description"]  # the field's docstring


def test_the_sweep_schema_takes_the_base_inline_or_as_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    validator = jsonschema.Draft202012Validator(printed_schema(capsys, "--sweep"))
    validator.validate({"base": "experiment.yaml", "axes": {"target.history": ["full", "none"]}})
    validator.validate({"base": {"target": {"type": "python", "callable": "m:f"}}, "axes": {"seed": [1, 2]}})
    assert list(validator.iter_errors({"base": {"targt": {}}, "axes": {"seed": [1]}}))


def test_a_misspelt_field_names_the_closest_allowed_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "experiment.yaml"
    config.write_text("target:\n  type: reference\n  histroy: last:3u\nsimulation: {max_turn: 3}\n")
    assert main(["config", "check", str(config)]) == 2
    err = capsys.readouterr().err
    assert "target.histroy: unknown field (did you mean `history`?)" in err
    assert "simulation.max_turn: unknown field (did you mean `max_turns`?)" in err
