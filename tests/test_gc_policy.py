"""A run's objects die young (ragdive.gc_policy): the youngest generation is collected less often while a run
works, and the collector is as it was once the last run ends, whatever order concurrent runs end in."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from ragdive import gc_policy
from ragdive.gc_policy import YOUNG_THRESHOLD, fewer_collections, lasting


def test_runs_at_once_share_the_setting_and_the_last_to_end_restores_it() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        first, second = ExitStack(), ExitStack()
        first.enter_context(fewer_collections())
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        second.enter_context(fewer_collections())
        first.close()  # the first run ends while the second still works
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        second.close()
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(100_000, 5, 5)  # a user's own, higher setting is kept
        with fewer_collections():
            assert gc.get_threshold() == (100_000, 5, 5)
        assert gc.get_threshold() == (100_000, 5, 5)
    finally:
        gc.set_threshold(*before)


def test_a_run_session_keeps_the_setting_while_it_concludes(tmp_path: Path) -> None:
    """The conclusion reads every record of the run for its alarms (``final_fields``): under CPython's default the
    records it made collected the whole heap there, once a run."""
    from ragdive.store import RunStore
    from ragdive.store.session import RunSession

    seen: dict[str, tuple[int, int, int]] = {}

    def alarms() -> dict[str, object]:
        seen["conclusion"] = gc.get_threshold()
        return {}

    async def work() -> None:
        seen["work"] = gc.get_threshold()

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        session = RunSession(RunStore.create(tmp_path), final_fields=alarms)
        asyncio.run(session.run(work))
        assert seen == {"work": (YOUNG_THRESHOLD, 10, 10), "conclusion": (YOUNG_THRESHOLD, 10, 10)}
        assert gc.get_threshold() == (700, 10, 10)  # restored once the run has its final status
        assert session.store.read_manifest().status == "finished"
    finally:
        gc.set_threshold(*before)


def test_in_a_one_command_process_the_last_user_turns_the_collector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command is over and the process exits at once (cli.fast_exit): putting the threshold of 700 back would
    have the next allocation collect every young object the run left, for nothing."""
    monkeypatch.setattr(gc_policy, "_one_command", True)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_collections():
            with fewer_collections():  # a run's session inside the command
                pass
            assert gc.isenabled() and gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.set_threshold(*before)


def test_lasting_objects_are_frozen_only_in_a_one_command_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's modules live as long as the process: no collection runs while they are imported, and none walks
    them after (frozen). Elsewhere (tests, programs calling cli.main or the API) the collector is left alone."""
    try:
        with lasting():
            assert gc.isenabled()
            made = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == 0 and gc.isenabled()
        monkeypatch.setattr(gc_policy, "_one_command", True)
        with lasting():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(made)
    finally:
        gc.unfreeze()
        gc.enable()


def test_the_console_entry_point_is_a_one_command_process(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom ragdive import gc_policy\nfrom ragdive.cli import main as cli\n"
        "cli.main = lambda argv=None: print(gc_policy.one_command_process()) or 0\n"
        "print(gc_policy.one_command_process())\ncli.entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
