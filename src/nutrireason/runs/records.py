"""Per-sample records: one JSON line per finished (item, method, model), appended as it finishes.

The log survives SIGKILL: each record is one ``os.write`` of a full line to a file opened in
append mode, so a kill can at worst leave one partial last line, which ``RecordLog.open``
truncates away. Records are the truth: metrics and reports are computed from them alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from nutrireason.schema import (
    RECORDS_FILE,
    Record,
    read_records,
    read_records_bytes,
    record_key,
)
from nutrireason.storage import atomic_path

__all__ = ["RECORDS_FILE", "Record", "RecordLog", "read_records", "read_records_bytes",
           "record_key"]


class RecordLog:
    """Append-only JSONL of records, repaired on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        # keys the file answers twice with different answers (the last is kept), on open
        self.conflicts: list[str] = []

    def open(self) -> dict[str, Record]:
        """Repair a partial last line, then return the existing records by key (last wins)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        records = self._repair_and_read()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return records

    def _repair_and_read(self) -> dict[str, Record]:
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with open(self.path, "r+b") as handle:
                handle.truncate(end)
        self.conflicts = []
        return read_records_bytes(data[:end], self.path, self.conflicts)

    def append(self, record: Record) -> None:
        """Write one record as one line and hand it to the OS before returning."""
        assert self._fd is not None, "open() first"
        line = (record.model_dump_json() + "\n").encode("utf-8")
        view = memoryview(line)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def rewrite(self, records: list[Record]) -> None:
        """Atomically replace the log with ``records`` (used to drop errors being retried)."""
        self.close()
        with atomic_path(self.path) as tmp:
            tmp.write_text("".join(r.model_dump_json() + "\n" for r in records),
                           encoding="utf-8")
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
