"""The model-call cache: SQLite (stdlib), content-addressed.

The key is a SHA-256 over everything that decides an answer: provider/model, base URL, messages, the JSON
schema, generation parameters and the repeat index — so ten deliberate repeats of a run stay ten different calls
unless asked otherwise. Only the answer is stored (text, finish reason, token counts): no API key, no parameter
values, nothing recoverable from the key.

Concurrency: lookups and writes are short, synchronous statements behind a lock (safe from asyncio tasks and
from `asyncio.to_thread` workers); WAL mode and a busy timeout let several processes share one cache folder.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..records import Usage
from .base import Completion, GenerateParams, Message

SCHEMA_VERSION = 1
DB_NAME = "completions.sqlite3"


def cache_key(
    *,
    model: str,
    base_url: str | None,
    messages: list[Message],
    schema: str | None,
    params: GenerateParams,
    repeat_index: int,
) -> str:
    payload = {
        "v": SCHEMA_VERSION,
        "model": model,
        "base_url": base_url or "",
        "messages": [[m.role, m.content] for m in messages],
        "schema": schema,
        "params": params.model_dump(exclude_none=True),
        "repeat": repeat_index,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CompletionCache:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.directory / DB_NAME, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS completions ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, created REAL NOT NULL, value TEXT NOT NULL)"
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the model cache in {self.directory}: {exc}") from exc
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM completions WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        value: dict[str, Any] = json.loads(row[0])
        self.hits += 1
        return Completion(
            text=value["text"],
            model=value.get("model", ""),
            finish_reason=value.get("finish_reason"),
            usage=Usage(
                prompt_tokens=value.get("prompt_tokens", 0), completion_tokens=value.get("completion_tokens", 0)
            ),
            cached=True,
        )

    def put(self, key: str, completion: Completion) -> None:
        value = {
            "text": completion.text,
            "model": completion.model,
            "finish_reason": completion.finish_reason,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
        }
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO completions (key, model, created, value) VALUES (?, ?, ?, ?)",
                (key, completion.model, time.time(), json.dumps(value, ensure_ascii=False)),
            )

    def discard(self, key: str) -> None:
        """Forget one entry (e.g. a cached answer that no longer validates)."""
        with self._lock:
            self._db.execute("DELETE FROM completions WHERE key = ?", (key,))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
