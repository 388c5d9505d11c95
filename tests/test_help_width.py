"""`ragdive --help` and every sub-command's help read cleanly at 80 columns: rich wraps each text greedily, so a
line that could have taken the next word but stops mid-sentence is a line break written into a help string (a
docstring's own line breaks, kept by typer's rich mode in command lists)."""

from __future__ import annotations

import re

import pytest
import typer.rich_utils
from typer.testing import CliRunner

from ragdive.cli.lazy import COMMANDS, load_command, summary_line
from ragdive.cli.main import app

SENTENCE_END = (".", ":", "!", "?", ")", "]")  # "]": an option's [default: ...] or [required]


def command_paths() -> list[list[str]]:
    paths: list[list[str]] = [[]]
    for name in COMMANDS:
        paths.append([name])
        paths.extend([name, sub] for sub in getattr(load_command(name), "commands", {}))
    return paths


def help_text(args: list[str], columns: int) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.output


def broken_lines(text: str) -> list[str]:
    """Lines that end mid-sentence although the next line's first word would have fit after them."""
    lines = [line[1:-1] if line.startswith("│") and line.endswith("│") else line for line in text.splitlines()]
    found = []
    for line, after in zip(lines, lines[1:], strict=False):
        start = len(after) - len(after.lstrip())
        if start < 3 or not line[start:].strip():  # a new row or paragraph starts at the left edge
            continue
        if line[start - 1 : start].strip():  # not a continuation of the same column
            continue
        text_here = line[start:].rstrip()
        room = len(line.rstrip("│")) - start - 1  # rich keeps one column of padding on the right
        next_word = after.split()[0]
        if text_here.endswith(SENTENCE_END) or next_word in ("-", "•", "*"):
            continue
        if len(text_here) + 1 + len(next_word) <= room:
            found.append(f"{text_here!r} | {next_word!r}")
    return found


@pytest.mark.parametrize("columns", [80])
def test_every_help_reads_cleanly_at_80_columns(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # typer reads TERMINAL_WIDTH once, when rich_utils is first imported (another test may have set it then)
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", columns)
    problems = {}
    for path in command_paths():
        text = help_text(path, columns)
        assert max(len(line) for line in text.splitlines()) <= columns, path
        broken = broken_lines(text)
        if broken:
            problems[" ".join(["ragdive", *path])] = broken
    assert problems == {}


def test_the_checker_finds_a_line_broken_mid_sentence() -> None:
    """What the rendered help looked like before command lists took one sentence: a docstring's line break."""
    rendered = (
        "│ run   Simulate conversations, then score them: one run directory holds  │\n"
        "│       both.                                                              │\n"
        "│       Prints the per-metric summary. With                               │\n"
        "│       --executor ray the conversations are split into parts.            │"
    )
    assert broken_lines(rendered) == ["'Prints the per-metric summary. With' | '--executor'"]


def test_a_command_list_line_is_its_help_s_first_sentence_on_one_line() -> None:
    doc = "Score RUN: writes evaluations.jsonl.\n    Prints the summary, e.g. the mean.\n\n    More."
    assert summary_line(doc) == "Score RUN: writes evaluations.jsonl."
    assert "\n" not in summary_line("One sentence\n    on two lines")
    assert re.fullmatch(r"[^\n]+", summary_line(app.info.help or "x"))
