"""Every `ragdive ...` command the README shows exists, and so does every --option written on its line: each
(sub)command's --help exits 0 and names the option. A user copies these lines; a renamed flag must fail here,
not on their machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragdive.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
SHELL_FENCES = {"", "bash", "sh", "shell", "console"}
WORD = re.compile(r"[a-z][a-z-]*")


def readme_command_lines(readme: Path = README) -> list[str]:
    """`ragdive ...` lines of the README's shell blocks (comments cut) and of its inline code spans."""
    found, fence = [], None
    for raw in readme.read_text(encoding="utf-8").splitlines():
        opened = re.match(r"\s*```(\w*)", raw)
        if opened:
            fence = None if fence is not None else opened.group(1)
            continue
        if fence is None:
            candidates = re.findall(r"`([^`]+)`", raw)
        elif fence in SHELL_FENCES:
            candidates = [raw.split(" #", 1)[0]]
        else:
            continue
        for text in candidates:
            text = text.strip().removeprefix("$ ").strip()
            # a line of a shell script may run ragdive after a pipe, `&&` or an assignment
            for part in re.split(r"\|\||&&|\||;|\$\(", text):
                part = part.strip()
                if part.startswith("ragdive "):
                    found.append(part)
    return found


def help_of(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main([*path, "--help"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    # help wide enough that no option name is cut or wrapped
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("TERMINAL_WIDTH", "300")


def test_the_readme_shows_commands(capsys: pytest.CaptureFixture[str]) -> None:
    lines = readme_command_lines()
    assert len(lines) >= 30 and any(line.startswith("ragdive run ") for line in lines)


def test_every_readme_command_and_option_exists(capsys: pytest.CaptureFixture[str]) -> None:
    missing = problems(readme_command_lines(), capsys)
    assert not missing, "\n".join(missing)


def test_a_missing_command_or_option_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "Run `ragdive run exp.yaml --resume RUN`.\n\n```bash\nragdive runs list --json  # fine\n"
        "ragdive run exp.yaml --no-such-flag\nragdive frobnicate x\nragdive runs list --nope\n```\n",
        encoding="utf-8",
    )
    found = problems(readme_command_lines(readme), capsys)
    assert found == [
        "ragdive run exp.yaml --no-such-flag: `ragdive run` has no --no-such-flag",
        "ragdive frobnicate x: no command 'frobnicate'",
        "ragdive runs list --nope: `ragdive runs list` has no --nope",
    ]


def problems(lines: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, top = help_of((), capsys)
    assert code == 0
    commands = set(re.findall(r"^\s*│?\s*([a-z][a-z-]+)\s{2,}", top, re.M))
    assert {"run", "sweep", "report", "demo"} <= commands
    helps: dict[tuple[str, ...], tuple[int, str]] = {}
    missing = []
    for line in lines:
        words = line.split()[1:]
        if not words or words[0].startswith("-"):
            continue
        if words[0] not in commands:
            missing.append(f"{line}: no command {words[0]!r}")
            continue
        path: tuple[str, ...] = (words[0],)
        if len(words) > 1 and WORD.fullmatch(words[1]):
            if path not in helps:
                helps[path] = help_of(path, capsys)
            if re.search(rf"^\s*│?\s*{re.escape(words[1])}\s{{2,}}", helps[path][1], re.M):
                path = (words[0], words[1])  # a group's sub-command (runs list, config schema, ...)
        if path not in helps:
            helps[path] = help_of(path, capsys)
        code, text = helps[path]
        if code != 0:
            missing.append(f"{line}: `ragdive {' '.join(path)} --help` exits {code}")
            continue
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line):
            if option != "--help" and not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text):
                missing.append(f"{line}: `ragdive {' '.join(path)}` has no {option}")
    return missing
