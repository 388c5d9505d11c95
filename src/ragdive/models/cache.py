"""The model-call cache: SQLite (stdlib), content-addressed.

The key is a SHA-256 over everything that decides an answer: provider/model, base URL, messages, the JSON
schema, generation parameters and the repeat index — so ten deliberate repeats of a run stay ten different calls
unless asked otherwise. Only the answer is stored (text, finish reason, token counts): no API key, no parameter
values, nothing recoverable from the key.

Writes are group-committed off the event loop: ``put`` hands the entry to a writer thread (with its own SQLite
connection) and returns at once; the writer commits whatever has accumulated in one transaction (a commit per
call cost issue 13's profile 7.4 s of 52). Until it is committed an entry is served from memory, so an identical
call right after is still a hit. Durability: an entry is committed once ``settled()`` (or ``close()``) returns (in
SQLite's write-ahead log, safe from a kill of the process; from a power cut only after the next checkpoint); the
simulation runner and the evaluator await ``settled()`` before they write a conversation or a score line, so a run
record never counts on an answer the cache could still lose to a kill (a re-run of a finished run is served from
the cache in full). A kill before that loses only entries no record depends on: those calls are made again.

Lookups use their own connection on the caller's thread; WAL mode lets them read while the writer commits, and a
busy timeout lets several processes share one cache folder. A miss is mostly answered from memory (the keys in the
database are known there), so it costs no query; an entry another process committed is seen within
KEYS_REFRESH_S.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .. import wire_json
from ..errors import ConfigError
from ..records import Usage
from ..redaction import redact_text
from ..wire_json import string_list_json
from .base import Completion, GenerateParams, Message

SCHEMA_VERSION = 1
COALESCE_S = 0.05
ROWS_PER_INSERT = 200
"""4 parameters a row: 800, within SQLite's oldest limit of 999 per statement."""
"""The writer's pause between commits: what is put meanwhile is committed together."""
DB_NAME = "completions.sqlite3"


def cache_key(
    *,
    model: str,
    base_url: str | None,
    messages: list[Message],
    schema: str | None,
    params: GenerateParams,
    repeat_index: int,
    params_json: bytes | None = None,
) -> str:
    """SHA-256 of the JSON text ``json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    default=str)`` writes for ``payload = {"v": SCHEMA_VERSION, "model": model, "base_url": base_url or "",
    "messages": [[role, content], ...], "schema": schema, "params": params.model_dump(exclude_none=True),
    "repeat": repeat_index}`` (the keys stored so far were made so), put together in the sorted order of its keys:
    strings, the messages and the repeat index written by wire_json (the standard library's bytes for them, ~12x
    faster), the parameters (floats) by the standard library itself. ``params_json``: what ``key_params_json``
    gives for ``params``, made once by a caller whose parameters do not change (a model's own)."""
    text = b"".join(
        (
            b'{"base_url":',
            string_list_json(base_url or ""),
            b',"messages":',
            string_list_json([[m.role, m.content] for m in messages]),
            b',"model":',
            string_list_json(model),
            b',"params":',
            key_params_json(params) if params_json is None else params_json,
            b',"repeat":',
            # an int's JSON is its decimal digits (a bool or another type: the encoder, as before)
            b"%d" % repeat_index if type(repeat_index) is int else _KEY_JSON.encode(repeat_index).encode("utf-8"),
            b',"schema":',
            b"null" if schema is None else string_list_json(schema),
            b',"v":%d}' % SCHEMA_VERSION,
        )
    )
    return hashlib.sha256(text).hexdigest()


def key_params_json(params: GenerateParams) -> bytes:
    """The generation parameters as a cache key holds them."""
    return _KEY_JSON.encode(params.model_dump(exclude_none=True)).encode("utf-8")


_KEY_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
"""The keys' JSON, as json.dumps with these options writes it (the same bytes, so stored keys still match), made
once: json.dumps builds an encoder per call when given options, a few microseconds of every cached call."""


KEYS_REFRESH_S = 0.5
"""How stale this process's view of the keys other processes stored may be: a cache shared by several processes
misses an entry another one committed less than this long ago (and makes that call itself)."""
_ABSENT: Any = object()


def _prefix(key: str) -> int:
    """A key's 64-bit stand-in in memory (Python's own string hash: this process's view only, never stored)."""
    return hash(key)


Row = tuple[str, str, float, str]
"""key, model, created, value (JSON)"""


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 5000")
    db.execute("PRAGMA journal_mode = WAL")
    return db


class CompletionCache:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._db = _connect(self.directory / DB_NAME)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS completions ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, created REAL NOT NULL, value TEXT NOT NULL)"
            )
            self._writer_db = _connect(self.directory / DB_NAME)
            # WAL's NORMAL: a commit reaches the OS at once (a killed process loses nothing) and the disk at the next
            # checkpoint, not with an fsync of its own; a power cut may lose the last commits, which only makes
            # those calls again (no run record is ever lost with them: records are fsync'ed by the store)
            self._writer_db.execute("PRAGMA synchronous = NORMAL")
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the model cache in {self.directory}: {exc}") from exc
        self._stored: set[int] = set()
        """Key prefixes of the entries in the database and of every entry put here (see _maybe_stored)."""
        self._stored_rowid = 0
        self._stored_at = -KEYS_REFRESH_S  # read at the first lookup
        self._lock = threading.Lock()
        self._read_lock = threading.Lock()
        """The lookup connection's own: lookups may come from several threads (the Python API's)."""
        self.hits = 0
        self.misses = 0
        # written but not yet committed: key -> row (None: a discard), in put order
        self._pending: dict[str, Row | None] = {}
        self._batch: list[tuple[str, Row | None]] = []
        """Writes not yet taken by the writer, in order (swapped out whole: no copying under the lock)."""
        self._queued = 0
        """Sequence number of the last put or discard."""
        self._committed = 0
        """Sequence number up to which everything is on disk."""
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._error: BaseException | None = None
        self._wake = threading.Condition(self._lock)
        self._closing = False
        self._writer_idle = False
        self._writer = threading.Thread(target=self._write_loop, name="ragdive-cache-writer", daemon=True)
        self._writer.start()

    def get(self, key: str) -> Completion | None:
        with self._lock:
            pending = self._pending.get(key, _ABSENT)
        if pending is not _ABSENT:
            raw = pending[3] if pending is not None else None
        elif not self._maybe_stored(key):
            raw = None  # a miss answered from memory: no query (see _maybe_stored)
        else:
            # Outside the writer's lock (the writer takes it to hand over every batch). Safe: an entry leaves
            # _pending only once committed, so a key not pending was committed before this read (WAL shows it) or
            # is put after it (a miss either way).
            with self._read_lock:
                row = self._db.execute("SELECT value FROM completions WHERE key = ?", (key,)).fetchone()
            raw = row[0] if row else None
        hit = _read_entry(raw) if raw is not None else None
        if hit is None:  # absent, or a damaged row (not an entry): a miss; the answer made instead replaces it
            self.misses += 1
            return None
        self.hits += 1
        return hit

    def _maybe_stored(self, key: str) -> bool:
        """False when the key is surely not in the database. Every query releases the GIL, and with the writer
        thread runnable, taking it back cost a miss ~18 us where the query alone takes ~5 (issue 13: a cache on
        cost 17% of calls/s at L = 0). So the keys in the database are known in memory (a 64-bit hash of each,
        ~70 bytes an entry): read whole at the first lookup, then what other connections added (rowids above the
        last seen) at most every KEYS_REFRESH_S, so an entry another process committed is seen within that."""
        now = time.monotonic()
        if now - self._stored_at >= KEYS_REFRESH_S:
            with self._read_lock:
                rows = self._db.execute(
                    "SELECT rowid, key FROM completions WHERE rowid > ?", (self._stored_rowid,)
                ).fetchall()
            for rowid, stored_key in rows:
                self._stored.add(_prefix(stored_key))
                self._stored_rowid = max(self._stored_rowid, rowid)
            self._stored_at = now
        return _prefix(key) in self._stored

    def put(self, key: str, completion: Completion) -> None:
        """Queue the entry for the writer (served from memory until committed); see ``settled``."""
        # secrets masked as in the run files (a reply that quotes a key stays on disk for good); keys are hashes.
        # The two texts alone: the entry's own field names ("prompt_tokens") would wake the token patterns.
        value = {
            "text": redact_text(completion.text),
            "model": redact_text(completion.model),
            "finish_reason": completion.finish_reason,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
        }
        self._stored.add(_prefix(key))  # before it is queued: committed, it is still known (not yet re-read)
        stored = wire_json.dumps(value).decode("utf-8")  # read back by json.loads: compact JSON reads the same
        self._queue(key, (key, completion.model, time.time(), stored))

    def discard(self, key: str) -> None:
        """Forget one entry (e.g. a cached answer that no longer validates)."""
        self._queue(key, None)

    def _queue(self, key: str, row: Row | None) -> None:
        with self._lock:
            if self._closing:
                raise RuntimeError("the model cache is closed")
            self._pending[key] = row
            self._batch.append((key, row))
            self._queued += 1
            if self._writer_idle:  # a busy writer takes this with its next batch: no wake-up (and GIL hand-off) each
                self._wake.notify_all()  # flush() may wait on the same condition

    async def settled(self) -> None:
        """Return once every entry put so far is committed (shared with whoever else waits: one commit)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._raise_error()
            if self._committed >= self._queued:
                return
            done: asyncio.Future[None] = loop.create_future()
            self._waiters.append((self._queued, loop, done))
        await done

    def flush(self) -> None:
        """Block until every entry put so far is committed (synchronous callers, close)."""
        with self._lock:
            target = self._queued
            while self._committed < target and self._error is None and self._writer.is_alive():
                self._wake.wait(timeout=1.0)
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise ConfigError(f"cannot write the model cache in {self.directory}: {self._error}")

    def _write_loop(self) -> None:
        while True:
            with self._lock:
                while not self._batch and not self._closing:
                    self._writer_idle = True
                    self._wake.wait()
                self._writer_idle = False
                if not self._batch:
                    return  # closing, and everything is committed
                taken, self._batch, upto = self._batch, [], self._queued
            batch = dict(taken)  # the last write of each key wins
            error = self._commit(batch)
            with self._lock:
                for key, row in batch.items():
                    if key in self._pending and self._pending[key] is row:  # not rewritten meanwhile
                        del self._pending[key]
                self._error = self._error or error
                self._committed = upto
                ready = [w for w in self._waiters if w[0] <= upto or error is not None]
                self._waiters = [w for w in self._waiters if w not in ready]
                self._wake.notify_all()
            # one hand-over per event loop, not one per waiter: each call_soon_threadsafe writes to the loop's wake-up
            # pipe (a syscall here and a wake-up and a read there), and a run's every score waits here
            by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
            for _, loop, done in ready:
                by_loop.setdefault(loop, []).append(done)
            for loop, waiting in by_loop.items():
                try:
                    loop.call_soon_threadsafe(_resolve_all, waiting, error)
                except RuntimeError:  # that event loop is closed: nobody is waiting any more
                    pass
            if error is not None:
                return
            if not self._closing:
                # let the next batch gather: fewer commits, and fewer wake-ups taking the GIL from the event loop
                time.sleep(COALESCE_S)

    def _commit(self, batch: dict[str, Row | None]) -> BaseException | None:
        rows = [row for row in batch.values() if row is not None]
        gone = [(key,) for key, row in batch.items() if row is None]
        try:
            self._writer_db.execute("BEGIN IMMEDIATE")
            if gone:
                self._writer_db.executemany("DELETE FROM completions WHERE key = ?", gone)
            # many rows per statement: executemany steps (and gives up and takes back the GIL) once per row, and
            # every hand-back can stall the event loop's thread on a busy machine
            for start in range(0, len(rows), ROWS_PER_INSERT):
                chunk = rows[start : start + ROWS_PER_INSERT]
                self._writer_db.execute(
                    "INSERT OR REPLACE INTO completions (key, model, created, value) VALUES "
                    + ",".join(["(?, ?, ?, ?)"] * len(chunk)),
                    [field for row in chunk for field in row],
                )
            self._writer_db.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self._writer_db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            return exc
        return None

    def __len__(self) -> int:
        self.flush()
        with self._read_lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        """Commit what is pending, then close (idempotent)."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._wake.notify_all()
        self._writer.join()
        with self._lock, self._read_lock:
            self._db.close()
            self._writer_db.close()


def _read_entry(raw: str) -> Completion | None:
    """The stored answer (decoded by orjson: ~4x faster than json.loads, on every hit of a cached re-run); None
    when the row is not an entry as ``put`` writes them (not JSON, no text, a field of the wrong type)."""
    try:
        value = wire_json.loads(raw)
        return Completion(
            text=value["text"],
            model=value.get("model", ""),
            finish_reason=value.get("finish_reason"),
            usage=Usage(
                prompt_tokens=value.get("prompt_tokens", 0), completion_tokens=value.get("completion_tokens", 0)
            ),
            cached=True,
        )
    except (ValueError, TypeError, KeyError, AttributeError):  # pydantic's ValidationError is a ValueError
        return None


def _resolve_all(waiting: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for done in waiting:  # in the order they started waiting
        _resolve(done, error)


def _resolve(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():
        return
    if error is not None:
        done.set_exception(ConfigError(f"cannot write the model cache: {error}"))
    else:
        done.set_result(None)
