from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.config import ExperimentConfig, interpolate_env, load_config, validate_config
from ragdive.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    return path


def test_a_valid_config_loads_with_defaults(tmp_path: Path) -> None:
    cfg = load_config(
        write(
            tmp_path,
            """
name: demo
models:
  default: scripted/echo
  judge: {model: openai/gpt-4o-mini, base_url: "http://127.0.0.1:1/v1"}
corpus: {path: docs}
target: {type: reference, top_k: 3, history: "last:2"}
""",
        )
    )
    assert isinstance(cfg, ExperimentConfig)
    assert cfg.models.for_role("user").model == "scripted/echo"  # type: ignore[union-attr]
    assert cfg.models.for_role("judge").model == "openai/gpt-4o-mini"  # type: ignore[union-attr]
    assert cfg.target is not None and cfg.target.type == "reference" and cfg.target.top_k == 3
    assert cfg.simulation.max_attempts == 3


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("simulation: {max_turns: many}", "simulation.max_turns: got 'many'"),
        ("simulation: {max_turnz: 3}", "simulation.max_turnz: unknown field"),
        ("target: {type: reference, history: 'last:0'}", "target.history: got 'last:0'"),
        ("target: {type: http}", "target.url: required field is missing"),
        ("target: {type: carrier-pigeon}", "target"),
        ("simulation: {personas: [precise, 3]}", "simulation.personas[1]: got 3"),
        ("models: {judge: {model: x/y, temprature: 1}}", "models.judge.temprature: unknown field"),
        ("- a list", "expected a mapping"),
    ],
)
def test_config_errors_name_the_field_path_and_the_bad_value(tmp_path: Path, yaml_text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, yaml_text))
    assert expected in str(info.value)
    assert str(tmp_path / "exp.yaml") in str(info.value)


def test_invalid_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"line \d+, column \d+: invalid YAML"):
        load_config(write(tmp_path, "a: 1\nb: [unclosed\n"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_env_interpolation() -> None:
    env = {"KEY": "sk-1", "HOST": "127.0.0.1"}
    tree = {"a": "${KEY}", "b": ["http://${HOST}:${PORT:-8000}/v1"], "c": 3}
    assert interpolate_env(tree, env) == {"a": "sk-1", "b": ["http://127.0.0.1:8000/v1"], "c": 3}
    with pytest.raises(ConfigError, match=r"models.judge.api_key: environment variable MISSING_VAR"):
        interpolate_env({"models": {"judge": {"api_key": "${MISSING_VAR}"}}}, env)


def test_validate_config_from_a_dict_with_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDIVE_TEST_KEY", "secret-value")
    cfg = validate_config({"models": {"judge": {"model": "openai/x", "api_key": "${RAGDIVE_TEST_KEY}"}}})
    assert cfg.models.judge is not None and cfg.models.judge.api_key == "secret-value"
