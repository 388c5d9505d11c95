from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.errors import ConfigError
from ragdive.models import Message, create_backend, known_providers
from ragdive.models.prompting import render_transcript
from ragdive.testing import Fault, StubServer

KEY_ENV = "RAGDIVE_TEST_STUB_KEY"


def test_models_check_against_a_server(stub: StubServer, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_ENV, "sk-test-stub-key")
    code = main(["models", "check", "openai/stub-model", "--base-url", stub.base_url, "--api-key-env", KEY_ENV])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "structured output: ok" in out and "latency:" in out and "tokens:" in out and "cost unknown" in out
    assert stub.request_count == 1 and stub.requests[0].body["response_format"]["type"] == "json_schema"


def test_models_check_reports_broken_structured_output(stub: StubServer, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_ENV, "sk-test-stub-key")
    stub.plan(Fault.bad_content("no idea"), Fault.bad_content("still no idea"))
    code = main(["models", "check", "openai/stub-model", "--base-url", stub.base_url, "--api-key-env", KEY_ENV])
    out = capsys.readouterr().out
    assert code == 1 and "structured output: FAILED" in out and "still no idea" in out


def test_models_check_401_is_one_line_naming_the_variable(stub: StubServer, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_ENV, "sk-wrong")
    code = main(["models", "check", "openai/stub-model", "--base-url", stub.base_url, "--api-key-env", KEY_ENV])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("error: openai/stub-model: 401") and KEY_ENV in err


def test_unknown_provider_and_missing_litellm_are_config_errors(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["models", "check", "zzz/x"]) == 2
    assert "unknown model provider 'zzz'; known: scripted, openai, llamacpp, litellm" in capsys.readouterr().err
    assert main(["models", "check", "opanai/x"]) == 2
    assert "unknown model provider 'opanai' (did you mean `openai`?)" in capsys.readouterr().err
    assert {"openai", "llamacpp", "litellm", "scripted"} <= set(known_providers())
    try:
        import litellm  # noqa: F401
    except ImportError:
        with pytest.raises(ConfigError, match=r"optional extra: pip install 'ragdive\[litellm\]'"):
            create_backend("litellm/anthropic/claude-x")
        assert main(["models", "check", "litellm/x"]) == 2
        assert "ragdive[litellm]" in capsys.readouterr().err  # brackets survive the error printer


def test_llamacpp_path_must_exist(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(ConfigError, match="no GGUF file at"):
        create_backend(f"llamacpp/{tmp_path / 'missing.gguf'}")
    create_backend("llamacpp/default")  # cheap: nothing is assembled or loaded until the first call


def test_transcript_rendering_for_base_models() -> None:
    text = render_transcript(
        [
            Message(role="system", content="Be brief."),
            Message(role="user", content="Name a color."),
            Message(role="assistant", content="Blue."),
            Message(role="user", content="Another?"),
        ]
    )
    assert text == "Be brief.\n\nUser: Name a color.\nAssistant: Blue.\nUser: Another?\nAssistant:"
