"""A run killed (SIGKILL) after a conversation's rejection lines and before its conversation line, then resumed:
the resumed run redoes that conversation and writes its rejections again, under the same ids. The manifest's
counts must equal the files' content, each rejection counted once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from ragdive.cli.main import main
from ragdive.store import CONVERSATIONS, REJECTIONS, RunStore

from .test_cli_simulate import ROOT, simtest, write_setup

__all__ = ["simtest"]  # the fixture, used by name below

# The real `ragdive simulate`, with the simtest models registered and one seam: the second conversation's line
# is never written. The runner has already written that conversation's rejections when it calls
# append_conversation, so the process stops exactly between the two writes (it says so in a marker file and
# waits to be killed).
KILLABLE_SCRIPT = """
import os, sys, time
from pathlib import Path
from tests.simulation.test_cli_simulate import register
from ragdive.store import RunStore

register()
write = RunStore.append_conversation

def append_conversation(self, conversation):
    if conversation.index == 1:
        Path(os.environ["KILLTEST_MARKER"]).write_text(str(self.path))
        time.sleep(3600)
    write(self, conversation)

RunStore.append_conversation = append_conversation
from ragdive.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

STRICT = ["--model", "validator=simtest/strict"]  # rejects every draft: 3 rejections per turn


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(marker: Path, proc: subprocess.Popen[str]) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if marker.exists() and marker.read_text():
            return Path(marker.read_text())
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before the seam: {proc.communicate()[1]}")
        time.sleep(0.05)
    raise AssertionError("the run did not reach the second conversation's write within 60 s")


def assert_counts_equal_files(store: RunStore) -> None:
    """Counted here from the raw lines, independently of the recorder: rejections of conversations on disk, one
    per (conversation, turn, attempt)."""
    conversations = lines(store.path / CONVERSATIONS)
    ids = {c["id"] for c in conversations}
    rejections = {
        (r["conversation_id"], r["turn_index"], r["attempt"]): r
        for r in lines(store.path / REJECTIONS)
        if r["conversation_id"] in ids
    }
    categories = Counter(c for r in rejections.values() for c in r["categories"])  # type: ignore[attr-defined]
    totals = store.read_manifest().totals
    assert totals.conversations == len(conversations)
    assert totals.turns == sum(len(c["turns"]) for c in conversations)  # type: ignore[arg-type]
    assert totals.rejections == len(rejections)
    assert totals.rejections_by_category == dict(categories)


def test_sigkill_between_rejections_and_conversation_then_resume_counts_each_rejection_once(
    tmp_path: Path, simtest: None
) -> None:
    config = write_setup(tmp_path, conversations=3, max_turns=2, concurrency=1)
    marker = tmp_path / "at-the-seam"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_SCRIPT, "simulate", str(config), *STRICT],
        cwd=ROOT,
        env={**os.environ, "KILLTEST_MARKER": str(marker)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_dir = wait_for(marker, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    store = RunStore(run_dir)
    assert len(lines(run_dir / CONVERSATIONS)) == 1
    assert len(lines(run_dir / REJECTIONS)) == 12  # the first conversation's 6, and the dropped second's 6
    assert store.read_manifest().status == "running"  # nobody could record how it stopped
    assert_counts_equal_files(store)

    assert main(["simulate", str(config), "--resume", str(run_dir), *STRICT]) == 0
    manifest = store.read_manifest()
    assert manifest.status == "finished"
    raw = lines(run_dir / REJECTIONS)
    ids = [f"{r['conversation_id']}/t{r['turn_index']}/a{r['attempt']}" for r in raw]
    assert len(raw) == 24 and len(set(ids)) == 18  # the redone conversation wrote its 6 rejections again
    assert manifest.totals.conversations == 3 and manifest.totals.rejections == 18
    assert manifest.totals.rejections_by_category == {"wrong_type": 18}
    assert_counts_equal_files(store)
