"""A run's objects die young (ragdive.gc_policy): the youngest generation is collected less often while a run
works, and the collector is as it was once the last run ends, whatever order concurrent runs end in."""

from __future__ import annotations

import asyncio
import gc
from contextlib import ExitStack
from pathlib import Path

from ragdive.gc_policy import YOUNG_THRESHOLD, fewer_collections


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
