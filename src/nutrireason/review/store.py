"""Review decisions in SQLite: one row per decision (reviewer, role, time, before and after),
committed as it is made, in WAL mode, so several reviewers can save at once and a killed server
loses nothing it acknowledged. An undone decision stays in the table, marked undone."""

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
    after TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'reviewer',
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS decisions_item ON decisions (benchmark, item);
"""
# columns a database written before roles and undo lacks (added on open)
ADDED_COLUMNS = {"role": "TEXT NOT NULL DEFAULT 'reviewer'",
                 "undone": "INTEGER NOT NULL DEFAULT 0"}
COLUMNS = "id, benchmark, item, reviewer, at, action, before, after, role"


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
    role: str = "reviewer"

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
        present = {row[1] for row in self._db.execute("PRAGMA table_info(decisions)")}
        for name, kind in ADDED_COLUMNS.items():
            if name not in present:
                self._db.execute(f"ALTER TABLE decisions ADD COLUMN {name} {kind}")

    def close(self) -> None:
        self._db.close()

    def save(self, benchmark: str, item: str, reviewer: str, action: str,
             before: dict[str, Any], after: dict[str, Any], role: str = "reviewer"
             ) -> Decision:
        """Check and commit one decision; returns it with its id and time."""
        check_decision(action, after, benchmark)
        if not reviewer.strip():
            raise DataError("review decision", "a reviewer name is required", field="reviewer")
        at = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO decisions (benchmark, item, reviewer, at, action, before, after, "
                "role) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (benchmark, item, reviewer.strip(), at, action,
                 json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True), role))
        return Decision(int(cursor.lastrowid), benchmark, item, reviewer.strip(), at, action,
                        before, after, role)

    def decisions(self, benchmark: str | None = None, item: str | None = None
                  ) -> list[Decision]:
        """Every decision not undone (of one benchmark, of one entry), oldest first."""
        where = {"benchmark": benchmark, "item": item}
        asked = {column: value for column, value in where.items() if value}
        query = f"SELECT {COLUMNS} FROM decisions WHERE undone = 0" + \
            "".join(f" AND {column} = ?" for column in asked) + " ORDER BY id"
        return [_decision(row) for row in self._db.execute(query, tuple(asked.values()))]

    def undo_last(self, benchmark: str, reviewer: str) -> Decision | None:
        """Mark the reviewer's last decision (not yet undone) undone; returns it, or None when
        there is nothing to undo. The row stays in the table."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {COLUMNS} FROM decisions WHERE undone = 0 AND benchmark = ? AND "
                "reviewer = ? ORDER BY id DESC LIMIT 1", (benchmark, reviewer)).fetchone()
            if row is None:
                return None
            self._db.execute("UPDATE decisions SET undone = 1 WHERE id = ?", (row[0],))
        return _decision(row)

    def latest(self, benchmark: str) -> dict[tuple[str, str], Decision]:
        """(item, reviewer) -> that reviewer's last decision on the item."""
        return latest_of(self.decisions(benchmark))


def _decision(row: tuple[Any, ...]) -> Decision:
    return Decision(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]),
                    json.loads(row[7]), row[8])


def latest_of(decisions: list[Decision]) -> dict[tuple[str, str], Decision]:
    """(item, reviewer) -> the reviewer's last decision on the item (by time, then id)."""
    return {(d.item, d.reviewer): d for d in sorted(decisions, key=lambda d: (d.at, d.id))}


def default_store_path() -> Path:
    from nutrireason.paths import data_home

    return data_home() / "reviews" / "reviews.sqlite"
