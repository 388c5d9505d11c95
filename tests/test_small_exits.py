"""Mistakes that used to end in "unexpected error ... this is a bug" (exit 1) or were silently accepted are one
readable line and exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.models.backends.openai_compat import OpenAIBackend
from ragdive.store import RunStore
from tests.factories import make_conversation
from tests.pipeline.helpers import write_experiment


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ") and "bug" not in err, err
    return err


def test_a_binary_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "experiment.yaml"
    config.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00\x00")
    assert main(["config", "check", str(config)]) == 2
    assert "is not UTF-8 text" in one_error_line(capsys)


def test_a_repeated_yaml_key_names_the_key_and_its_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "experiment.yaml"
    config.write_text("seed: 1\nmodels:\n  judge: openai/a\n  user: openai/b\n  judge: openai/c\n")
    assert main(["config", "check", str(config)]) == 2
    assert "key 'judge' is repeated (lines 3 and 5)" in one_error_line(capsys)
    config.write_text("base: &b {seed: 1}\nother:\n  <<: *b\n  seed: 2\n")  # a merge key may be overridden
    from ragdive.config.loader import load_yaml

    assert load_yaml(config)["other"] == {"seed": 2}


def test_export_to_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore.create(tmp_path, run_id="r")
    store.append_conversation(make_conversation("c1"))
    existing = tmp_path / "turns.csv"
    existing.write_text("keep me\n")
    assert main(["export", str(store.path), "-o", str(existing)]) == 2
    assert "is a file" in one_error_line(capsys)
    assert existing.read_text() == "keep me\n"


def test_a_url_with_a_password_and_an_api_key_is_one_error() -> None:
    with pytest.raises(ConfigError, match="user:password and an API key"):
        OpenAIBackend("openai/m", base_url="http://u:pw@127.0.0.1:9/v1", api_key="a-real-key")
    alone = OpenAIBackend("openai/m", base_url="http://u:pw@127.0.0.1:9/v1")  # basic auth from the URL alone
    assert "Authorization" not in alone._headers


def contexts_five(message: str) -> dict[str, Any]:
    return {"answer": "an answer", "contexts": 5}


def test_a_python_target_reply_of_the_wrong_shape_stops_the_run_like_an_http_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_experiment(tmp_path)
    config.write_text(
        config.read_text().replace("tests.pipeline.helpers:answer", "tests.test_small_exits:contexts_five")
    )
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "contexts must be a list, got int" in err and "bug" not in err
