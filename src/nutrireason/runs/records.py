"""Per-sample records: one JSON line per finished (item, method, model), appended as it finishes.

The log survives SIGKILL: each record is one ``os.write`` of a full line to a file opened in
append mode, so a kill can at worst leave one partial last line, which ``RecordLog.open``
truncates away. Records are the truth: metrics and reports are computed from them alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from nutrireason.errors import DataError
from nutrireason.io import atomic_path

RECORDS_FILE = "records.jsonl"


class Record(BaseModel):
    """Everything about one sample: ids, prompt, raw output, parsed answer, gold, cost, error."""

    model_config = ConfigDict(extra="allow")

    key: str
    item_id: str
    method: str
    model: str
    status: Literal["ok", "error"]
    parsed: Any = None
    parse_ok: bool = False
    gold: Any = None
    requests: list[dict[str, Any]] = Field(default_factory=list)
    responses: list[str] = Field(default_factory=list)
    raw: list[Any] = Field(default_factory=list)
    retrieved: list[Any] | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    latency_s: float = 0.0
    wall_s: float = 0.0
    n_calls: int = 0
    cache_hits: int = 0
    attempts: int = 0
    error: dict[str, Any] | None = None
    finished_at: float = 0.0
    meta: dict[str, Any] = Field(default_factory=dict)


def record_key(item_id: str, method: str, model: str) -> str:
    """The identity of a sample within a run."""
    return f"{item_id}::{method}::{model}"


class RecordLog:
    """Append-only JSONL of records, repaired on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

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
        return read_records_bytes(data[:end], self.path)

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


def read_records_bytes(data: bytes, path: Path) -> dict[str, Record]:
    """Parse complete JSONL lines; a malformed line is an error naming file and line."""
    records: dict[str, Record] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = Record.model_validate(json.loads(line))
        except ValueError as exc:
            raise DataError(path, f"line {number} is not a valid record: {exc}") from exc
        records[record.key] = record
    return records


def read_records(path: str | Path) -> list[Record]:
    """Every record of a run (a run directory or its records.jsonl), last per key."""
    path = Path(path)
    if path.is_dir():
        path = path / RECORDS_FILE
    if not path.is_file():
        raise DataError(path, "no records file", expected="a run directory from `nutrireason run`")
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return list(read_records_bytes(data[:end], path).values())
