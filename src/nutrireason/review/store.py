"""Review decisions in SQLite: one row per decision (reviewer, time, before and after),
committed as it is made, in WAL mode, so several reviewers can save at once and a killed server
loses nothing it acknowledged."""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.reviewfile import check_decision

SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    benchmark TEXT NOT NULL,
    item TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    before TEXT NOT NULL,
    after TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_item ON decisions (benchmark, item);
"""


@dataclass(frozen=True)
class Decision:
    """One saved decision. ``after``: label (Rec, NotRec, or None when excluded), ingredients
    (the rationale), exclusion (a reason or None) and note."""

    id: int
    benchmark: str
    item: str
    reviewer: str
    at: str
    action: str
    before: dict[str, Any]
    after: dict[str, Any]

    @property
    def label(self) -> str | None:
        return self.after.get("label")


class ReviewStore:
    """The decisions database (``<data home>/reviews/reviews.sqlite`` by default)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                   timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a committed decision survives a crash
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def save(self, benchmark: str, item: str, reviewer: str, action: str,
             before: dict[str, Any], after: dict[str, Any]) -> Decision:
        """Check and commit one decision; returns it with its id and time."""
        check_decision(action, after, benchmark)
        if not reviewer.strip():
            raise DataError("review decision", "a reviewer name is required", field="reviewer")
        at = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO decisions (benchmark, item, reviewer, at, action, before, after) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (benchmark, item, reviewer.strip(), at, action,
                 json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True)))
        return Decision(int(cursor.lastrowid), benchmark, item, reviewer.strip(), at, action,
                        before, after)

    def decisions(self, benchmark: str | None = None) -> list[Decision]:
        """Every decision, oldest first."""
        query = "SELECT id, benchmark, item, reviewer, at, action, before, after FROM decisions"
        rows = self._db.execute(query + (" WHERE benchmark = ?" if benchmark else "") +
                                " ORDER BY id", (benchmark,) if benchmark else ()).fetchall()
        return [Decision(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), json.loads(r[7]))
                for r in rows]

    def latest(self, benchmark: str) -> dict[tuple[str, str], Decision]:
        """(item, reviewer) -> that reviewer's last decision on the item."""
        return latest_of(self.decisions(benchmark))


def latest_of(decisions: list[Decision]) -> dict[tuple[str, str], Decision]:
    """(item, reviewer) -> the reviewer's last decision on the item (by time, then id)."""
    return {(d.item, d.reviewer): d for d in sorted(decisions, key=lambda d: (d.at, d.id))}


def default_store_path() -> Path:
    from nutrireason.paths import data_home

    return data_home() / "reviews" / "reviews.sqlite"
