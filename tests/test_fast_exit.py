"""The console entry point ends the process without the interpreter's teardown (ragdive.cli.fast_exit), and only
that: every atexit handler registered while the command ran still runs, buffered output is written, and the exit
code is the command's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# a stand-in command: registers an atexit handler (as an exporter's flush does), leaves its last line in the stdout
# buffer, returns 3; an object alive until the teardown says so when the teardown frees it
SCRIPT = """
import atexit, sys
from pathlib import Path
from ragdive.cli import main as cli


class TornDown:
    def __del__(self):
        sys.__stderr__.write("torn down\\n")


kept = TornDown()


def command(argv=None):
    atexit.register(lambda: Path(sys.argv[2]).write_text("handler ran"))
    print("the last line", end="")
    return 3


cli.main = command
if sys.argv[1] == "entry":
    cli.entry()
sys.exit(cli.main())
"""


@pytest.mark.parametrize("how", ["entry", "plain"])
def test_the_entry_point_skips_only_the_teardown(tmp_path: Path, how: str) -> None:
    marker = tmp_path / "handler.txt"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, how, str(marker)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "the last line"
    assert marker.read_text() == "handler ran"
    # the plain ending is the control: the teardown frees the object (so the entry point's skipping it is seen)
    assert ("torn down" in done.stderr) == (how == "plain"), done.stderr


def test_a_command_that_raised_ends_as_python_ends(tmp_path: Path) -> None:
    """No code from the command: the fast ending stands aside (Python prints the error and exits 1 itself)."""
    script = SCRIPT.replace("    return 3", "    raise RuntimeError('boom')")
    done = subprocess.run(
        [sys.executable, "-c", script, "entry", str(tmp_path / "h.txt")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "RuntimeError: boom" in done.stderr and "torn down" in done.stderr
