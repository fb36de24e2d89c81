"""SIGKILL a run at random moments, resume, and get exactly a clean run's records."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.runs.test_engine import write_items

ITEMS = 300
MODEL = "scripted/echo?latency=0.02"


def command(bench: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "nutrireason", "run", str(bench), "--out", str(out),
            "--model", MODEL, "--concurrency", "4", "--no-cache", "--no-progress"]


def records(out: Path) -> tuple[list[str], dict[str, str]]:
    lines = (out / "records.jsonl").read_text().splitlines()
    parsed = [json.loads(line) for line in lines]
    return [r["key"] for r in parsed], {r["key"]: r["parsed"] for r in parsed}


def wait_until_running(out: Path, process: subprocess.Popen, timeout: float = 60) -> None:
    """Until ``process`` owns the run (its pid in the manifest) or has ended."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            manifest = json.loads((out / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {}
        if (manifest.get("owner") or {}).get("pid") == process.pid:
            return
        time.sleep(0.01)


def test_sigkill_at_random_points_then_resume_equals_clean_run(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", ITEMS)
    clean = tmp_path / "clean"
    subprocess.run(command(bench, clean), check=True, capture_output=True, timeout=120)
    _, expected = records(clean)
    assert len(expected) == ITEMS

    killed = tmp_path / "killed"
    rng = random.Random(7)
    progress = []
    for _ in range(5):
        process = subprocess.Popen(command(bench, killed), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        wait_until_running(killed, process)  # start-up time varies with the machine's load
        time.sleep(rng.uniform(0.0, 1.0))
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        if (killed / "records.jsonl").exists():
            progress.append(len((killed / "records.jsonl").read_bytes().splitlines()))
    subprocess.run(command(bench, killed), check=True, capture_output=True, timeout=120)
    keys, got = records(killed)
    assert len(keys) == len(set(keys)) == ITEMS  # no duplicates, no loss
    assert got == expected
    print("records after each kill:", progress)
    assert any(0 < n < ITEMS for n in progress), progress  # some kill landed mid-run


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", ITEMS)
    out = tmp_path / "run"
    process = subprocess.Popen(command(bench, out), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not (out / "records.jsonl").exists() or not (out / "records.jsonl").stat().st_size:
        assert time.monotonic() < deadline, "the run never wrote a record"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 130, output
    assert "run the same command again to resume" in " ".join(output.split())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    done = manifest["summary"]["ok"]
    assert 0 < done < ITEMS
    finished = subprocess.run(command(bench, out), capture_output=True, text=True, timeout=120)
    assert f"{done} already done" in " ".join(finished.stdout.split())
    keys, _ = records(out)
    assert len(keys) == len(set(keys)) == ITEMS
