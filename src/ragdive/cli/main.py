"""The `ragdive` command. Each sub-command lives in its own module; this one wires them and owns error display."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer

from .._version import __version__
from ..errors import RagdiveError, is_storage_error, storage_error
from ..gc_policy import fewer_collections, one_command
from ..safe_text import visible_controls
from . import fast_exit
from ._signals import EXIT_INTERRUPTED, Stop, sigterm_as_interrupt
from .lazy import LazyCommands
from .safe_output import safe_output

# sub-commands are imported on first use (lazy.py): `ragdive --version` does not load the whole tool
app = typer.Typer(
    name="ragdive",
    help="Evaluate RAG systems through simulated multi-turn conversations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=LazyCommands,
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ragdive {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    _state["debug"] = debug


def entry() -> NoReturn:
    """The console script and `python -m ragdive`: `main`, then the process ends with its exit code without the
    interpreter's teardown (fast_exit: every atexit handler still runs first)."""
    fast_exit.arm()  # before the command: its handler must be registered first, to run last
    one_command()  # so the collector skips what only an interpreter that goes on would need (gc_policy)
    code = main()
    fast_exit.done(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: user errors are one line and exit 2; bugs exit 1 with a hint; Ctrl-C exits 130 and
    SIGTERM, which stops a run the same way, 143."""
    # every write: secrets masked, control characters shown; a command is one batch process: its objects die young
    # (ragdive.gc_policy: the end of a run reads every record it wrote)
    with sigterm_as_interrupt() as stop, safe_output(), fewer_collections():
        return _main(argv, stop)


def _main(argv: list[str] | None, stop: Stop) -> int:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        app(args=argv, standalone_mode=True)
    except SystemExit as exc:
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 1
        # typer turns KeyboardInterrupt into exit 130 itself; after a SIGTERM that is ours to say
        return stop.exit_code if code == EXIT_INTERRUPTED else code
    except RagdiveError as exc:
        return _user_error(exc, debug)
    except KeyboardInterrupt:
        _errors().print("terminated (SIGTERM)" if stop.terminated else "interrupted")
        return stop.exit_code
    except Exception as exc:  # a bug: say so briefly, keep the traceback for --debug
        if is_storage_error(exc):  # a full or read-only disk met outside the store (an export, a cache): the user's
            return _user_error(storage_error(exc), debug)  # type: ignore[arg-type]
        err_console = _errors()
        if debug:
            err_console.print_exception()
        else:
            from rich.markup import escape

            err_console.print(
                f"[bold red]unexpected error:[/] {type(exc).__name__}: {escape(visible_controls(str(exc)))}\n"
                "  this is a bug in ragdive; run again with --debug for the traceback and report it",
                markup=True,
                highlight=False,
            )
        return 1
    return 0


def _user_error(exc: RagdiveError, debug: bool) -> int:
    """One line (more only when the message has them), exit 2 or the error's own code."""
    err_console = _errors()
    if debug:
        err_console.print_exception()
    message = visible_controls(str(exc).strip()) or type(exc).__name__
    first, *rest = message.splitlines()
    from rich.markup import escape

    err_console.print(f"[bold red]error:[/] {escape(first)}", markup=True, highlight=False)
    for line in rest:
        err_console.print(f"  {line}", markup=False)
    return exc.exit_code


def _errors() -> Any:
    """The error console (display.py), imported only when there is an error to show."""
    from .display import errors

    return errors


if __name__ == "__main__":
    entry()
