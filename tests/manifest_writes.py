"""Every manifest write of the runs made while a test runs, as the status each one wrote: the run session's
contract is that a run's statuses go created -> running -> one final status, each final status written once."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from ragdive.records import RunManifest
from ragdive.store import RunStore

FINAL = {"finished", "failed", "interrupted", "budget_exceeded"}


class ManifestWrites:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statuses: dict[Path, list[str]] = defaultdict(list)
        write = RunStore._write_manifest

        def recorded(store: RunStore, manifest: RunManifest) -> None:
            write(store, manifest)
            self.statuses[store.path.resolve()].append(manifest.status)

        monkeypatch.setattr(RunStore, "_write_manifest", recorded)

    def of(self, run: Path) -> list[str]:
        return self.statuses[Path(run).resolve()]

    def changes(self, run: Path) -> list[str]:
        """The statuses in the order written, a status written again at once (a count or spend update) once."""
        changes: list[str] = []
        for status in self.of(run):
            if not changes or changes[-1] != status:
                changes.append(status)
        return changes

    def assert_one_session(self, run: Path, final: str, *, created: bool = True) -> None:
        """created (when this test made the run) -> running -> ``final``, the final status written once, last."""
        expected = ["created", "running", final] if created else ["running", final]
        writes = self.of(run)
        assert self.changes(run) == expected, writes
        assert writes.count(final) == 1 and writes[-1] == final, writes
        assert not FINAL & set(writes[:-1]), writes  # no other final status on the way
