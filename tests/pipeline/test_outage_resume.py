"""A validator outage fails its conversations (status error, turns so far kept); --resume against the healthy
validator simulates them again, scores the new lines, and drops the scores of the failed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdive.cli.main import main
from ragdive.store import RunStore

from .helpers import scripted, write_experiment


def test_resume_redoes_conversations_an_outage_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_experiment(tmp_path)
    text = config.read_text().replace(
        scripted("validator", "tests.pipeline.helpers:accept"),
        scripted("validator", "tests.pipeline.helpers:validator_with_outage"),
    )
    config.write_text(text)
    monkeypatch.setenv("RAGDIVE_TEST_OUTAGE", "1")
    main(["run", str(config)])
    store = RunStore.open(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    failed = store.current_conversations()
    assert [c.status for c in failed] == ["error", "error"] and all("validator down" in (c.error or "") for c in failed)
    assert store.finished_conversation_ids() == set()  # failed is not done

    monkeypatch.delenv("RAGDIVE_TEST_OUTAGE")
    assert main(["run", str(config), "--resume", str(store.path)]) == 0
    capsys.readouterr()
    redone = store.current_conversations()
    assert [c.status for c in redone] == ["finished", "finished"] and all(len(c.turns) == 2 for c in redone)
    assert len(store.conversations().records) == 4  # append-only: the failed lines stay, readers see the new ones
    totals = store.read_manifest().totals
    assert (totals.conversations, totals.turns, totals.errors) == (2, 4, 0)
    current = store.current_scores()
    assert totals.scores == len(current)  # the manifest counts by the same rule the readers use
    finished = {c.id: c.finished for c in redone}
    assert current and all(s.conversation_finished == finished[s.conversation_id] for s in current)
    assert {(s.conversation_id, s.turn_index) for s in current if s.turn_index is not None} == {
        (c.id, i) for c in redone for i in range(2)
    }
