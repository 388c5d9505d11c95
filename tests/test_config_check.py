"""`ragdive config check`: what it finds without calling anything, and with --probe against real loopback
servers (the fault stub for the models, a closed port or the stub for the target)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.testing import Fault, StubServer


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write(tmp_path: Path, body: str) -> Path:
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(body)
    return cfg


def test_a_missing_corpus_and_a_missing_key_are_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MY_JUDGE_KEY", raising=False)
    cfg = write(
        tmp_path,
        f"corpus: {{path: {tmp_path / 'nowhere'}}}\n"
        "models:\n  default: {model: scripted/x}\n  judge: {model: openai/gpt-4o-mini, api_key_env: MY_JUDGE_KEY}\n"
        "target: {type: python, callable: no_such_module_here:answer}\n",
    )
    assert main(["config", "check", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"corpus.path: {tmp_path / 'nowhere'} does not exist" in err
    assert "models.judge: openai/gpt-4o-mini needs an API key: the environment variable MY_JUDGE_KEY is not set" in err
    assert "target.callable: module 'no_such_module_here' is not importable" in err
    assert "3 problem(s)" in err


def test_a_config_without_a_judge_is_not_called_complete_for_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "kb").mkdir()
    cfg = write(
        tmp_path,
        f"corpus: {{path: {tmp_path / 'kb'}}}\n"
        "models: {user: scripted/u, validator: scripted/v}\n"
        "target: {type: python, callable: json:dumps}\n",
    )
    assert main(["config", "check", str(cfg)]) == 0
    captured = capsys.readouterr()
    assert "note: models.judge: not set (run, static, evaluate need it)" in captured.err
    assert "valid (fields, paths, roles and keys checked); complete for: simulate" in captured.out


def test_probe_calls_each_model_and_the_target_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "kb").mkdir()
    with StubServer(reply=lambda body: "OK") as models, StubServer(reply=lambda body: "an answer") as rag:
        body = (
            f"corpus: {{path: {tmp_path / 'kb'}}}\n"
            f"models: {{default: {{model: openai/stub-model, base_url: '{models.base_url}', max_retries: 0}}}}\n"
        )
        cfg = write(tmp_path, body + f"target: {{type: openai-chat, base_url: '{rag.base_url}'}}\n")
        assert main(["config", "check", str(cfg), "--probe"]) == 0
        captured = capsys.readouterr()
        assert models.request_count == 3 and rag.request_count == 1  # user, validator, judge; the target
        for what in ("models.user (openai/stub-model): ok", "models.judge (openai/stub-model): ok", "target ("):
            assert what in captured.err
        assert "every model and the target answered" in captured.out

        models.plan(Fault.error(401, "bad key"))
        port = closed_port()
        cfg = write(tmp_path, body + f"target: {{type: http, url: 'http://127.0.0.1:{port}/ask?token=s3cret'}}\n")
        assert main(["config", "check", str(cfg), "--probe"]) == 2
        err = capsys.readouterr().err
        assert "probe models.user (openai/stub-model): FAILED: openai/stub-model: 401 Unauthorized" in err
        assert f"is unreachable: cannot connect to 127.0.0.1:{port}" in err and "s3cret" not in err
        assert "2 failed probe(s)" in err


def test_runs_list_without_a_folder_points_at_the_demos_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragdive.store import RunStore

    monkeypatch.chdir(tmp_path)
    assert main(["runs", "list"]) == 2  # no runs/ and no demo: the missing folder is the error it was
    RunStore.create(tmp_path / "ragdive-demo", config={})
    assert main(["runs", "list"]) == 0
    assert "the demo's runs are in ragdive-demo: ragdive runs list ragdive-demo" in capsys.readouterr().out
