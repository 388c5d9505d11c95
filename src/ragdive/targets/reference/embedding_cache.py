"""Chunk vectors keyed by content, so that rebuilding a dense index embeds only chunks never embedded before.

An index folder is keyed by the whole corpus (one edited document makes a new folder), but most of its chunks are
the same text as before: their vectors are looked up here instead. The key is sha256 of the model's name (which
holds every setting that changes vectors: model, endpoint, prefixes) and the chunk text; a vector is stored as
float32 bytes. One SQLite file per model beside the index folders: safe for two processes building at once
(a key is written once, ``INSERT OR IGNORE``), and a build interrupted half-way keeps the vectors it finished.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import numpy as np

KEY_VERSION = "v1"


def content_key(model_name: str, text: str) -> str:
    return hashlib.sha256(f"{KEY_VERSION}\0{model_name}\0{text}".encode()).hexdigest()


class EmbeddingCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._db.commit()

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        wanted = list(dict.fromkeys(keys))
        for i in range(0, len(wanted), 500):  # below SQLite's limit on bound parameters
            part = wanted[i : i + 500]
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
            ).fetchall()
            found.update((key, np.frombuffer(blob, np.float32)) for key, blob in rows)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)",
                ((key, np.ascontiguousarray(v, np.float32).tobytes()) for key, v in items),
            )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        self._db.close()
