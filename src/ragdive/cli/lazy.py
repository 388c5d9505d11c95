"""Sub-commands loaded on first use: `ragdive --version` or `ragdive run` imports only what it runs.

Importing every command module up front cost ~0.9 s on each call (the analysis, report and store modules, pydantic
models, numpy), before the command even started. Each command is named here by module and attribute; the module is
imported, and its typer function or sub-app turned into a click command, only when click asks for that command
(when it runs it, or when `--help` lists them all).
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import typer
from typer.core import TyperGroup

from ..gc_policy import lasting

# name on the command line -> (module under ragdive.cli, attribute: a command function or a typer sub-app);
# `--help` lists them in this order
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run_cmd"),
    "demo": ("demo", "demo_cmd"),
    "simulate": ("simulate", "simulate_cmd"),
    "evaluate": ("evaluate", "evaluate_cmd"),
    "compare": ("compare", "compare_cmd"),
    "gate": ("gate", "gate_cmd"),
    "static": ("static", "static_cmd"),
    "serve-rag": ("serve_rag", "serve_rag"),
    "analyze": ("analyze", "analyze_cmd"),
    "report": ("report", "report_cmd"),
    "export": ("export", "export_cmd"),
    "replay": ("replay", "replay_cmd"),
    "import": ("import_cmd", "import_cmd"),
    "sweep": ("sweep", "sweep_cmd"),
    "runs": ("runs", "app"),
    "config": ("config_cmd", "app"),
    "models": ("models_cmd", "app"),
    "annotate": ("annotate", "app"),
}


def load_command(name: str) -> Any:
    """The click command for ``name`` (typed Any: typer may bring its own copy of click)."""
    module_name, attribute = COMMANDS[name]
    with lasting():  # its modules live as long as the process: no collection walks them (gc_policy)
        module = importlib.import_module(f"ragdive.cli.{module_name}")
    target: Any = getattr(module, attribute)
    command: Any
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)  # a group even with one sub-command: `ragdive config check`
    else:
        wrapper = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        wrapper.command(name)(target)
        command = typer.main.get_command(wrapper)  # one function: that command itself
    command.name = name
    _list_lines(command)
    return command


def summary_line(help_text: str | None) -> str:
    """A command's line in a `--help` list: the first sentence of its help, on one line. (typer's rich mode keeps
    a docstring's line breaks there, so a listed paragraph broke mid-sentence at any width.)"""
    first = inspect.cleandoc(help_text or "").split("\n\n")[0]
    flat = " ".join(first.split())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z`])", flat, maxsplit=1)[0]


def _list_lines(command: Any) -> None:
    """``command`` and, for a group, each of its sub-commands get their list line (recursively)."""
    command.short_help = summary_line(command.short_help or command.help)
    for sub in getattr(command, "commands", {}).values():
        _list_lines(sub)


class LazyCommands(TyperGroup):
    """The root group: commands of COMMANDS are built on first use (and kept)."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in COMMANDS if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.commands[cmd_name] = load_command(cmd_name)
        return self.commands.get(cmd_name)
