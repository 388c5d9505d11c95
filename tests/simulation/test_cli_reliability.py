"""`ragdive simulate` meeting bad input and a bad target: a corpus in another encoding, binary and huge files, a
target that is down, an answer of megabytes. Each is one clear line or a visible, counted effect."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.models import registry as model_registry
from ragdive.store import RunStore

from .test_cli_simulate import register, write_setup


@pytest.fixture(autouse=True)
def _simtest() -> Iterator[None]:
    register()
    yield
    model_registry.unregister_backend("simtest")


HUGE_ANSWER = "x" * 250_000


def huge(message: str, history: list[dict[str, str]]) -> dict[str, object]:
    return {"answer": HUGE_ANSWER, "contexts": [{"text": "y" * 150_000}]}


def run_dir_of(out: str) -> Path:
    return Path(out.strip().splitlines()[-1])


def test_a_latin1_corpus_is_one_line_naming_corpus_encoding_then_reads_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_setup(tmp_path, conversations=1, max_turns=1)
    (tmp_path / "corpus" / "cafe.md").write_bytes("# Café\n\nLe café est très bon ici.".encode("latin-1"))
    assert main(["simulate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "cafe.md is not UTF-8" in err and "set corpus.encoding" in err and "bug" not in err

    (tmp_path / "again").mkdir()
    config = write_setup(tmp_path / "again", ", encoding: latin-1", conversations=1, max_turns=1)
    (tmp_path / "again" / "corpus" / "cafe.md").write_bytes("# Café\n\nLe café est très bon ici.".encode("latin-1"))
    assert main(["simulate", str(config)]) == 0
    assert "encoding latin-1" in capsys.readouterr().err


def test_binary_and_oversized_files_are_counted_in_one_summary_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_setup(tmp_path, ", max_document_tokens: 100, on_oversize: skip", conversations=1, max_turns=1)
    (tmp_path / "corpus" / "photo.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    (tmp_path / "corpus" / "big.md").write_text("# Big\n\n" + "many words here. " * 200)
    assert main(["simulate", str(config)]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("corpus:")]
    assert len(lines) == 1
    assert "1 binary file(s) skipped (photo.md)" in lines[0] and "1 over 100 tokens skipped (big)" in lines[0]


def test_an_unreachable_target_fails_before_any_draft_and_leaves_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = write_setup(tmp_path, conversations=2, max_turns=2)
    text = config.read_text().replace(
        "target: {type: python, callable: tests.simulation.test_cli_simulate:answer}",
        f"target: {{type: http, url: 'http://127.0.0.1:{port}/chat?key=s3cret'}}",
    )
    config.write_text(text)
    assert main(["simulate", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"is unreachable: cannot connect to 127.0.0.1:{port}" in err and "s3cret" not in err
    assert not (tmp_path / "runs").exists()  # no empty run left behind, no model was called


def test_stored_text_is_capped_with_a_visible_marker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_setup(tmp_path, target="tests.simulation.test_cli_reliability:huge", conversations=1, max_turns=1)
    config.write_text(config.read_text() + "store: {max_text_chars: 20000}\n")
    assert main(["simulate", str(config)]) == 0
    (conversation,) = RunStore.open(run_dir_of(capsys.readouterr().out)).conversations().records
    answer, context = conversation.turns[0].answer, conversation.turns[0].contexts[0].text
    assert answer is not None and answer.startswith("x" * 20000) and not answer.startswith("x" * 20001)
    assert answer.endswith("[truncated by ragdive: 250,000 characters, the first 20,000 kept; store.max_text_chars]")
    assert "150,000 characters" in context and len(context) < 20200
