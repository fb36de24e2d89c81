"""Response cache: successful responses keyed by (backend identity, full request), in SQLite."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from nutrireason.models.types import ModelResponse
from nutrireason.paths import data_home


def default_cache_path() -> Path:
    """``<data home>/cache/responses.sqlite``."""
    return data_home() / "cache" / "responses.sqlite"


class ResponseCache:
    """A small SQLite key-value store of model responses. Errors are never cached."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, provider TEXT, "
            "model TEXT, response TEXT NOT NULL, created REAL NOT NULL)")
        self.hits = 0
        self.misses = 0
        self.write_errors = 0  # responses the cache could not store (kept in records anyway)
        self.last_error: str | None = None

    def get(self, key: str) -> ModelResponse | None:
        """The cached response for ``key``, marked ``cached=True``, or None (also when the
        cache cannot be read: it is an optimisation, never a reason to fail a sample)."""
        try:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?",
                                   (key,)).fetchone()
        except sqlite3.Error as exc:
            self.last_error = str(exc)
            return None
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        response = ModelResponse.model_validate_json(row[0])
        response.cached = True
        return response

    def put(self, key: str, provider: str, model: str, response: ModelResponse) -> bool:
        """Store a successful response (latest wins); False when the cache cannot store it
        (a full disk, a read-only file): the caller keeps the response all the same."""
        stored = response.model_copy(update={"cached": False})
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)",
                (key, provider, model, stored.model_dump_json(), time.time()))
        except (sqlite3.Error, OSError) as exc:
            self.write_errors += 1
            self.last_error = str(exc)
            return False
        return True

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
