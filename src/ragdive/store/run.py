"""A run directory: the contract every command reads and writes (see docs/architecture.md, "The run directory")."""

from __future__ import annotations

import functools
import json
import os
import secrets
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .._version import __version__
from ..config import format_validation_error
from ..errors import StoreError, storage_error
from ..records import Annotation, Conversation, Rejection, RunManifest, Score, Totals
from ..records._base import utc_now
from ..redaction import redact
from .caps import DEFAULT_MAX_TEXT_CHARS
from .jsonl import JsonlAppender, ReadResult, read_jsonl
from .latest import latest, latest_rejections, latest_scores
from .lock import check_writable
from .migrations import migrate_manifest

MANIFEST = "manifest.json"
CONVERSATIONS = "conversations.jsonl"
REJECTIONS = "rejections.jsonl"
EVALUATIONS = "evaluations.jsonl"
ANNOTATIONS = "annotations.jsonl"
REPORT = "report.html"

RECORDER_FIELDS = frozenset({"status", "error", "process", "totals"})
"""Manifest fields only the run recorder changes."""


def new_run_id(now: datetime | None = None) -> str:
    """Sortable by creation time (UTC, second resolution), unique through a random suffix."""
    now = now or datetime.now(UTC)
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write to a temp file in the same folder, fsync, then rename: readers see the old or the new file, never
    half of one."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """A disk that refuses the write (full, read-only...) is a StorageError naming ``path`` and the cause."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise storage_error(exc, path) from exc
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600: give it the mode every other run file has
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise storage_error(exc, path) from exc
        raise


@functools.cache
def _umask() -> int:
    """The process umask (read once: os.umask can only be read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class _ConversationHead(BaseModel):
    """What the readers of scores and rejections need of a conversation line (the fields and defaults of
    records.Conversation): validating its turns, contexts and attempts is most of reading it."""

    id: str
    status: str = "finished"
    finished: datetime


class RunStore:
    """Reader and writer of one run directory. The only code that writes run files."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._max_text_chars: int | None = None
        self._cap_known = False  # read from the manifest on the first append
        self._checked = False  # the writer lock checked once, at the first manifest write
        self._conversations = JsonlAppender(self.path / CONVERSATIONS)
        self._rejections = JsonlAppender(self.path / REJECTIONS)
        self._evaluations = JsonlAppender(self.path / EVALUATIONS)
        self._annotations = JsonlAppender(self.path / ANNOTATIONS)

    # -- creating and opening -------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        root: Path,
        *,
        config: dict[str, Any] | None = None,
        run_id: str | None = None,
        **manifest_fields: Any,
    ) -> RunStore:
        """Create ``root/<run-id>/`` with a manifest. ``config`` is redacted before it is written."""
        run_id = run_id or new_run_id()
        path = Path(root) / run_id
        try:
            path.mkdir(parents=True, exist_ok=False)
        except FileExistsError as exc:
            raise StoreError(f"run directory {path} already exists") from exc
        except OSError as exc:
            raise StoreError(f"cannot create run directory {path}: {exc.strerror}") from exc
        store = cls(path)
        manifest = RunManifest(
            run_id=run_id, config=redact(config or {}), package_version=__version__, **manifest_fields
        )
        store._write_manifest(manifest)
        return store

    @classmethod
    def _adopt(cls, path: Path, manifest: RunManifest) -> RunStore:
        """A run made elsewhere (on a Ray worker) and mirrored here: its directory with the worker's description
        and a fresh status (created) and totals, which this side's run session and recorder write from then on."""
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create run directory {path}: {exc.strerror}") from exc
        store = cls(path)
        store._write_manifest(
            manifest.model_copy(update={"status": "created", "error": None, "process": None, "totals": Totals()})
        )
        return store

    @classmethod
    def open(cls, path: Path) -> RunStore:
        path = Path(path)
        if not path.is_dir():
            raise StoreError(f"no run directory at {path}")
        if not (path / MANIFEST).is_file():
            raise StoreError(f"{path} is not a ragdive run (no {MANIFEST})")
        return cls(path)

    # -- manifest ----------------------------------------------------------------------------------------------
    def read_manifest(self) -> RunManifest:
        try:
            data = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise StoreError(f"{self.path} has no {MANIFEST}") from exc
        except json.JSONDecodeError as exc:
            raise StoreError(f"{self.path / MANIFEST} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise StoreError(f"{self.path / MANIFEST} is not a valid manifest: not a JSON object")
        data, _ = migrate_manifest(data, str(self.path / MANIFEST))
        try:
            return RunManifest.model_validate(data)
        except ValidationError as exc:  # one line, naming each wrong field: not pydantic's six-line report
            problems = "; ".join(line.removeprefix(": ") for line in format_validation_error(exc, "").splitlines())
            raise StoreError(f"{self.path / MANIFEST} is not a valid manifest: {problems}") from exc

    def _write_manifest(self, manifest: RunManifest) -> None:
        """The one write of manifest.json (atomic). Private: a description changes through update_manifest, a
        status and totals through the run recorder, a run's lifecycle through its session."""
        if not self._checked:
            check_writable(self.path)  # another process's writer lock refuses this write (see lock.py)
            self._checked = True
        manifest = manifest.model_copy(update={"updated": utc_now()})
        write_json_atomic(self.path / MANIFEST, redact(manifest.model_dump(mode="json")))

    def update_manifest(self, **changes: Any) -> RunManifest:
        """Change what describes the run (name, models, target...). Its status, error, process and totals are the
        run recorder's (store.recorder): asking for them here is a bug, refused so that no second writer of
        them grows back."""
        owned = sorted(RECORDER_FIELDS & changes.keys())
        if owned:
            raise TypeError(f"{', '.join(owned)}: only the run recorder (ragdive.store.RunRecorder) changes these")
        return self._update_manifest(changes)

    def _update_manifest(self, changes: dict[str, Any]) -> RunManifest:
        """Read, change, validate, write atomically. The recorder's primitive (and update_manifest's)."""
        # validated, so a dict given for a nested field (totals={...}) becomes the record it should be
        data = {**self.read_manifest().model_dump(), **changes}
        manifest = RunManifest.model_validate(data)
        self._write_manifest(manifest)
        return manifest

    # -- appending ---------------------------------------------------------------------------------------------
    @property
    def max_text_chars(self) -> int | None:
        """The run's cap on stored text (store.max_text_chars in its config; the default for runs without one),
        read once, so every writer of this run (simulation, resume, evaluate) cuts at the same length."""
        if not self._cap_known:
            try:
                section = self.read_manifest().config.get("store") or {}
            except StoreError:  # a store used without a manifest (tests, tools): the default cap
                section = {}
            self._max_text_chars = section.get("max_text_chars", DEFAULT_MAX_TEXT_CHARS)
            self._cap_known = True
        return self._max_text_chars

    def append_conversation(self, conversation: Conversation) -> None:
        self._conversations.append(conversation, self.max_text_chars)

    def append_rejection(self, rejection: Rejection) -> None:
        self._rejections.append(rejection, self.max_text_chars)

    def append_rejections(self, rejections: list[Rejection]) -> None:
        """A conversation's rejections in one write and one fsync, each capped as append_rejection does."""
        self._rejections.append_all(rejections, self.max_text_chars)

    def append_score(self, score: Score) -> None:
        self._evaluations.append(score, self.max_text_chars)

    async def write_score(self, score: Score) -> None:
        """Group-committed: returns once the score's line is fsync'ed; concurrent scores share the fsync."""
        await self._evaluations.write(score, self.max_text_chars)

    async def drain_scores(self) -> None:
        """Wait for score lines still being written (a cancelled writer's too): the counts read the file next."""
        await self._evaluations.drain()

    def append_scores(self, scores: Iterable[Score]) -> None:
        """Many scores, one write and one fsync (see JsonlAppender.append_all), each capped as append_score does."""
        self._evaluations.append_all(scores, self.max_text_chars)

    def append_annotations(self, annotations: Iterable[Annotation]) -> None:
        """One import's ratings in a single write: an import lands whole or not at all."""
        self._annotations.append_all(annotations)

    def append_conversations(self, conversations: Iterable[Conversation]) -> None:
        """Many conversations, one write and one fsync: a batch finished as a whole (an import)."""
        self._conversations.append_all(conversations, self.max_text_chars)

    def publish(self, final: Path) -> RunStore:
        """Move this run directory (made in a staging folder) to ``final`` in one rename, so that a reader never
        sees it half-written; refused when ``final`` exists. Returns the store at its new place."""
        final = Path(final)
        if final.exists():
            raise StoreError(f"run directory {final} already exists")
        try:
            os.rename(self.path, final)
        except OSError as exc:
            raise StoreError(f"cannot move the run to {final}: {exc.strerror}") from exc
        return RunStore(final)

    # -- reading -----------------------------------------------------------------------------------------------
    def conversations(self) -> ReadResult[Conversation]:
        return read_jsonl(self.path / CONVERSATIONS, Conversation)

    def rejections(self) -> ReadResult[Rejection]:
        return read_jsonl(self.path / REJECTIONS, Rejection)

    def scores(self) -> ReadResult[Score]:
        return read_jsonl(self.path / EVALUATIONS, Score)

    def annotations(self) -> ReadResult[Annotation]:
        return read_jsonl(self.path / ANNOTATIONS, Annotation)

    def current_annotations(self) -> list[Annotation]:
        """One rating per (rater, item, criterion), the latest line: importing a sheet again replaces, never
        doubles, its ratings."""
        return latest(self.annotations().records, lambda a: a.key)

    def current_conversations(self) -> list[Conversation]:
        """One conversation per id, the latest line (a resumed run redoes a conversation that failed)."""
        return latest(self.conversations().records, lambda c: c.id)

    def current_scores(self) -> list[Score]:
        """One score per (conversation, turn, metric), the latest line, and only of the conversation line it judged
        (a score of a conversation redone since is stale): what every reader should count."""
        finished = {c.id: c.finished for c in self._conversation_heads()}  # the latest line's, of each id
        return [
            s
            for s in latest_scores(self.scores().records)
            if s.conversation_finished is None or finished.get(s.conversation_id) in (None, s.conversation_finished)
        ]

    def current_rejections(self) -> list[Rejection]:
        """One rejection per id, the latest line, of conversations on disk: what every reader should count."""
        return latest_rejections(self.rejections().records, {c.id for c in self._conversation_heads()})

    def finished_conversation_ids(self) -> set[str]:
        """Ids whose latest line is done: a resumed run skips these and never writes them twice. A conversation
        that failed (status error: a model outage, a bug) is not done: a resumed run simulates it again."""
        return {c.id for c in latest(self._conversation_heads(), lambda c: c.id) if c.status != "error"}

    def _conversation_heads(self) -> list[_ConversationHead]:
        """Every conversation line's id, status and stamp, in file order."""
        return read_jsonl(self.path / CONVERSATIONS, _ConversationHead).records

    @property
    def report_path(self) -> Path:
        return self.path / REPORT

    def write_report(self, html: str) -> Path:
        """The run's report.html, replaced atomically (a reader never sees half a report)."""
        write_text_atomic(self.report_path, html)
        return self.report_path


def list_runs(root: Path) -> list[RunStore]:
    """Runs directly under ``root``, oldest first (run ids sort by creation time)."""
    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"no runs folder at {root}")
    return [RunStore(p) for p in sorted(root.iterdir()) if p.is_dir() and (p / MANIFEST).is_file()]
