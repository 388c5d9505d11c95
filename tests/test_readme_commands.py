"""Every `ragdive ...` command line in the README's code blocks names a command that exists, whose `--help` exits 0,
and options that command has (issue 28 item 8: the README never lists a command or option that does not exist)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from ragdive.cli.main import app, main

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_command_lines() -> list[str]:
    lines, in_code, pending = [], False, ""
    for raw in README.read_text(encoding="utf-8").splitlines():
        if raw.lstrip().startswith("```"):
            in_code, pending = not in_code, ""
            continue
        if not in_code:
            continue
        line = pending + raw.split(" #")[0].strip()  # a trailing comment is not part of the command
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        line = line.removeprefix("$ ")
        if line.startswith("ragdive "):
            lines.append(line)
    return lines


def is_group(command: Any) -> bool:
    return hasattr(command, "get_command")  # duck-typed: typer may bring its own copy of click


def resolve(line: str) -> tuple[list[str], Any, list[str]]:
    """The sub-command path the line names, its click command, and the --options the line gives it."""
    tokens = shlex.split(line.split("|")[0].split("&&")[0])[1:]
    command: Any = typer.main.get_command(app)
    path: list[str] = []
    for token in tokens:
        sub = command.get_command(None, token) if is_group(command) else None
        if sub is None:
            break
        command, path = sub, [*path, token]
    options = [t.split("=")[0] for t in tokens if re.fullmatch(r"--[a-z][a-z0-9-]*(=.*)?", t)]
    return path, command, options


LINES = readme_command_lines()


def test_the_readme_names_commands() -> None:
    assert len(LINES) > 20  # the parser found the README's commands (a broken parser would pass everything)


@pytest.mark.parametrize("line", LINES)
def test_each_readme_command_exists_with_its_options(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    path, command, options = resolve(line)
    assert path or line.split()[1].startswith("--"), f"no such ragdive command: {line}"  # else root options
    assert main([*path, "--help"]) == 0, line
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help"}
    missing = [o for o in options if o not in known]
    assert not missing, f"{line}: `ragdive {' '.join(path)}` has no {missing}"
    capsys.readouterr()
