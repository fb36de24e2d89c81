"""A full disk never throws away an answer the model gave.

The disk is filled by injection (a tmpfs cannot be mounted on every test machine): the cache's
SQLite connection answers writes with SQLite's own "database or disk is full", and the records
log's write raises ``OSError(ENOSPC)`` after some records.
"""

from __future__ import annotations

import errno
import json
import sqlite3

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.models import cache as cache_module
from nutrireason.runs import RunConfig, run
from nutrireason.runs.records import RecordLog
from nutrireason.schema import read_records


class FullDisk:
    """A sqlite3 connection whose writes fail as on a full disk; reads work."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, *args: object):
        if sql.lstrip().upper().startswith("INSERT"):
            raise sqlite3.OperationalError("database or disk is full")
        return self.connection.execute(sql, *args)

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def items(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{n}", "prompt": f"say {n}", "gold": f"say {n}"})
                            + "\n" for n in range(40)))
    return path


def test_a_cache_that_cannot_store_loses_no_answer(tmp_path, items, monkeypatch):
    connect = sqlite3.connect
    monkeypatch.setattr(cache_module.sqlite3, "connect",
                        lambda *a, **k: FullDisk(connect(*a, **k)))
    summary = run(RunConfig(benchmark=items, out=tmp_path / "run", models=["scripted/echo"],
                            progress=False, cache_path=tmp_path / "cache.sqlite"))
    assert (summary.total_ok, summary.total_errors, summary.model_calls) == (40, 0, 40)
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert all(r.parsed == r.gold and r.parse_ok for r in records)
    assert "could not store 40 responses" in summary.cache_note
    assert "database or disk is full" in summary.cache_note


def test_a_full_run_folder_stops_with_one_line_and_resumes(tmp_path, items, monkeypatch):
    append = RecordLog.append
    written = []

    def fill_up(self, record):
        if len(written) >= 15:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(record.key)
        append(self, record)

    monkeypatch.setattr(RecordLog, "append", fill_up)
    out = tmp_path / "run"
    args = ["run", str(items), "--out", str(out), "--model", "scripted/echo", "--no-cache",
            "--no-progress", "--concurrency", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "No space left on device" in result.output
    assert "run the same command again to resume" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert len(read_records(out / "records.jsonl")) == 15

    monkeypatch.setattr(RecordLog, "append", append)  # space freed
    resumed = CliRunner().invoke(app, args)
    assert resumed.exit_code == 0, resumed.output
    records = read_records(out / "records.jsonl")
    assert len(records) == 40 and len({r.key for r in records}) == 40
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
