"""A run whose work happens in another process (a Ray worker), with the run directory written only here.

The worker runs the ordinary pipeline in a scratch directory of its own; ``RunTail`` reads what it appended since
the last read (complete lines only, the manifest when it changed) as a ``RunBatch`` of records; the records travel
back to the driver, whose ``RunMirror`` appends them through this package's own appenders (one fsync'ed line per
record) and rewrites the manifest atomically. So the run directory in the sweep has one writer, the driver, and
holds the same lines the worker wrote, in the same order.

Spend travels the same way: the worker's spend.jsonl lines (store.spend_journal) are tailed with its records and
journaled again on the driver's side before the records of the same batch, and the driver's manifest spend is the
sum of the lines mirrored (``SpendMirror``), not the worker's manifest. So what a worker spent reaches the driver
even when the worker's run never wrote it into a manifest (cancelled, killed), and a driver killed between two
manifest writes recovers it from its own journal on resume, as a local run does."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..records import Conversation, ModelSpend, Rejection, RunManifest, Score
from .jsonl import read_jsonl_tail
from .recorder import RunRecorder, merge_spend
from .run import CONVERSATIONS, EVALUATIONS, MANIFEST, RECORDER_FIELDS, REJECTIONS, RunStore
from .session import Outcome, RunSession
from .spend_journal import SPEND, SpendJournal

RECORD_FILES = (CONVERSATIONS, REJECTIONS, EVALUATIONS)


@dataclass
class RunBatch:
    """What one read of a worker's run directory found new."""

    manifest: dict[str, Any] | None = None
    """The manifest as the worker last wrote it, or None when unchanged since the previous batch."""
    conversations: list[Conversation] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    spend: list[ModelSpend] = field(default_factory=list)
    """The worker's new spend.jsonl lines: what its models were asked for since the previous batch."""

    def __len__(self) -> int:
        return len(self.conversations) + len(self.rejections) + len(self.scores)


class SpendMirror:
    """The driver's journal of what workers spent: each mirrored spend line is appended to the run's own
    spend.jsonl (through ``recorder``'s journal: the first of a process adds what a killed driver journaled
    beyond its manifest) and summed, the running snapshot the recorder adds to the manifest."""

    def __init__(self, recorder: RunRecorder) -> None:
        self._journal: SpendJournal | None = None
        self._lines: list[ModelSpend] = []
        recorder.attach(self)

    def journal_to(self, journal: SpendJournal) -> None:
        self._journal = journal

    def add(self, lines: list[ModelSpend]) -> None:
        assert self._journal is not None
        for line in lines:
            self._journal.append(line)
            self._lines.append(line)
        if len(self._lines) > 64:  # a long run's lines folded: the snapshot is their sum
            self._lines = list(merge_spend(self._lines).values())

    def snapshot(self) -> list[ModelSpend]:
        return list(merge_spend(self._lines).values())


def run_files(path: Path, conversations: Collection[str] | None = None) -> dict[str, bytes]:
    """The files a worker needs to resume this run (manifest and records), as bytes to send it; empty when the
    run has no directory yet. ``conversations``: only the lines of these conversation ids (a shard's part)."""
    if not (path / MANIFEST).is_file():
        return {}
    files = {name: (path / name).read_bytes() for name in (MANIFEST, *RECORD_FILES) if (path / name).is_file()}
    if conversations is not None:
        for name, field_name in (
            (CONVERSATIONS, "id"),
            (REJECTIONS, "conversation_id"),
            (EVALUATIONS, "conversation_id"),
        ):
            if name in files:
                files[name] = _lines_of(files[name], field_name, conversations)
    return files


def _lines_of(data: bytes, field_name: str, conversations: Collection[str]) -> bytes:
    """The complete lines whose ``field_name`` is one of ``conversations`` (a torn line, which every reader skips,
    is left out)."""
    kept = []
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get(field_name) in conversations:
            kept.append(line)
    return b"".join(kept)


class RunTail:
    """Reads a run directory's new records. Offsets start at the sizes of the files it was seeded with (see
    ``seed``), so what the driver already holds is never sent back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offsets = dict.fromkeys((*RECORD_FILES, SPEND), 0)  # spend.jsonl is never seeded: the worker's own
        self._manifest: str | None = None

    def seed(self, files: dict[str, bytes]) -> None:
        """Write the driver's files into this (scratch) directory, as the start of the worker's run."""
        self.path.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            if name != MANIFEST and name not in RECORD_FILES:
                raise StoreError(f"{name}: not a run file")
            (self.path / name).write_bytes(data)
            if name in self._offsets:
                self._offsets[name] = len(data)
        if MANIFEST in files:
            self._manifest = files[MANIFEST].decode("utf-8")

    def read(self) -> RunBatch:
        # the manifest first: its totals never count a record the batch does not carry
        batch = RunBatch()
        try:
            text = (self.path / MANIFEST).read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        if text is not None and text != self._manifest:
            batch.manifest, self._manifest = json.loads(text), text
        batch.spend = self._tail(SPEND, ModelSpend)  # before the records: spend is on disk no later than them
        batch.conversations = self._tail(CONVERSATIONS, Conversation)
        batch.rejections = self._tail(REJECTIONS, Rejection)
        batch.scores = self._tail(EVALUATIONS, Score)
        return batch

    def _tail(self, name: str, model: Any) -> list[Any]:
        records, offset = read_jsonl_tail(self.path / name, model, self._offsets[name])
        if offset < 0:  # the worker's resume rewrote a file it was seeded with: nothing sound to send
            raise StoreError(f"{self.path / name} shrank under its reader")
        self._offsets[name] = offset
        return records


class RunMirror:
    """The driver's side: applies batches to the run directory in the sweep, creating it with the first
    manifest (or, for one part of a split run, see ``part``).

    The driver's copy has its own run session (ragdive.store.session): the worker's manifests are not copied over
    it. Their description (config, models, target...) is applied as any change of description is, the spend lines
    the worker journaled are journaled here and added by the session's recorder (``SpendMirror``), the counts are
    recounted from the mirrored files, and `end` writes the final status once, as the worker's run ended (or as
    the driver saw it cut off)."""

    def __init__(
        self,
        path: Path,
        *,
        store: RunStore | None = None,
        on_manifest: Callable[[dict[str, Any]], None] | None = None,
        spend: SpendMirror | None = None,
    ) -> None:
        self.path = path
        self._store: RunStore | None = store or (RunStore(path) if (path / MANIFEST).is_file() else None)
        self._on_manifest = on_manifest
        self._session: RunSession | None = None
        self._spend = spend
        self._unjournaled: list[ModelSpend] = []
        """Spend lines that came before the run's manifest (none expected: the worker makes its run first)."""

    @classmethod
    def part(cls, store: RunStore, spend: SpendMirror, on_manifest: Callable[[dict[str, Any]], None]) -> RunMirror:
        """A mirror of one part of a split run, appending through ``store`` (the run all parts share, so every
        file has one appender) and journaling spend through ``spend`` (one for all parts: the recorder of the
        whole run adds it); each worker manifest, which tells of that part only, goes to ``on_manifest`` instead
        of being applied (the driver's session of the whole run records it)."""
        return cls(store.path, store=store, on_manifest=on_manifest, spend=spend)

    def apply(self, batch: RunBatch) -> None:
        if self._store is None:
            if batch.manifest is None:
                if len(batch):
                    raise StoreError(f"{self.path}: records arrived before the run's manifest")
                self._unjournaled += batch.spend
                return
            self._store = RunStore._adopt(self.path, RunManifest.model_validate(batch.manifest))
        store = self._store
        spent, self._unjournaled = [*self._unjournaled, *batch.spend], []
        if spent:
            self._spend_mirror().add(spent)
        for conversation in batch.conversations:
            store.append_conversation(conversation)
        for rejection in batch.rejections:
            store.append_rejection(rejection)
        store.append_scores(batch.scores)
        if batch.manifest is None:
            return
        if self._on_manifest is not None:
            self._on_manifest(batch.manifest)
        else:  # after the records, as the worker wrote them
            self._mirror(RunManifest.model_validate(batch.manifest))

    def _mirror(self, worker: RunManifest) -> None:
        store, session = self._started()
        described = {k: v for k, v in worker.model_dump().items() if k not in RECORDER_FIELDS and k != "updated"}
        current = store.read_manifest().model_dump()
        changed = {k: v for k, v in described.items() if current.get(k) != v}
        if changed:
            store.update_manifest(**changed)
        session.recorder.record(spend=self._spend_mirror().snapshot(), limits=worker.totals.limits)

    def _spend_mirror(self) -> SpendMirror:
        if self._spend is None:
            self._started()
        assert self._spend is not None
        return self._spend

    def _started(self) -> tuple[RunStore, RunSession]:
        assert self._store is not None
        if self._session is None:
            recorder = RunRecorder(self._store)
            self._spend = self._spend or SpendMirror(recorder)
            # the final write adds what was mirrored since the last manifest (the spend of a cut-off worker)
            self._session = RunSession(self._store, recorder=recorder, spend=self._spend.snapshot)
            self._session.start()
        return self._store, self._session

    def end(self, outcome: Outcome | None = None, raised: BaseException | None = None) -> None:
        """The driver's copy ends as the worker's run did (``outcome``), or as the driver saw it cut off
        (``raised``); nothing to end when no manifest ever arrived (the run was never made)."""
        if self._store is None or self._on_manifest is not None:
            return
        self._started()[1].conclude(outcome, raised)
