"""What a killed command leaves behind: its worker processes end with it, the temporary
folder of a write it did not finish is removed by the next write to the same target, and a
records file that answers one sample twice differently is reported, never settled in silence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.storage import atomic_folder, remove_stale_temporaries
from tests.test_folder_targets import items, run_cli, shard_pieces

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

# `nutrireason merge` in a child process, its records read by a pool of workers that take a
# minute over each file (so the test can kill the parent while they work)
SLOW_MERGE = textwrap.dedent("""
    import sys, time
    import nutrireason.runs.merge as merge
    merge.PARALLEL_BYTES = 0
    read = merge._columns
    def slow(path):
        time.sleep(60)
        return read(path)
    merge._columns = slow
    from nutrireason.cli import app
    app(sys.argv[1:])
""")

# a folder write killed half way: the temporary folder stays beside the target
KILLED_WRITE = textwrap.dedent("""
    import os, signal, sys
    from nutrireason.storage import atomic_folder
    with atomic_folder(sys.argv[1]) as folder:
        (folder / "half.txt").write_text("half")
        os.kill(os.getpid(), signal.SIGKILL)
""")


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_for(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def test_a_killed_merge_leaves_no_worker_process(tmp_path):
    parts = shard_pieces(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", SLOW_MERGE, "merge", *parts, "--out",
                              str(tmp_path / "merged")], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        parent = psutil.Process(child.pid)
        assert wait_for(lambda: len(parent.children()) >= 2, 60), "no workers started"
        workers = [p.pid for p in parent.children(recursive=True)]
        time.sleep(0.5)  # the workers have run their initializer and hold a file each
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        assert wait_for(lambda: all(gone(pid) for pid in workers), 10), \
            [pid for pid in workers if not gone(pid)]
    finally:
        if child.poll() is None:
            child.kill()
    assert not (tmp_path / "merged").exists()


def test_the_next_write_removes_a_killed_writes_temporary_folder(tmp_path):
    target = tmp_path / "merged"
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(target)], cwd=ROOT)
    assert killed.returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".merged.") and left[0].endswith(".tmp")
    result = runner.invoke(app, ["merge", *shard_pieces(tmp_path), "--out", str(target)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_live_writers_temporary_is_left_alone(tmp_path):
    target = tmp_path / "out"
    with atomic_folder(target) as folder:
        (folder / "a.txt").write_text("a")
        assert remove_stale_temporaries(target) == []  # our own, still being written
        assert folder.is_dir()
    stale = tmp_path / ".out.999999999.abc.tmp"  # no such process
    stale.mkdir()
    assert remove_stale_temporaries(target) == [stale] and not stale.exists()
    assert (target / "a.txt").read_text() == "a"


def twice_answered(tmp_path: Path) -> tuple[Path, Path]:
    bench = items(tmp_path)
    out = tmp_path / "run"
    assert run_cli(bench, out).exit_code == 0
    path = out / "records.jsonl"
    lines = path.read_text().splitlines()
    changed = json.loads(lines[2]) | {"parsed": "something else", "responses": ["else"]}
    path.write_text("\n".join(lines) + "\n" + json.dumps(changed) + "\n")
    return bench, out


def test_run_reports_a_sample_answered_twice_differently_on_resume(tmp_path):
    bench, out = twice_answered(tmp_path)
    key = json.loads((out / "records.jsonl").read_text().splitlines()[-1])["key"]
    result = run_cli(bench, out)
    assert result.exit_code == 0, result.output
    message = " ".join(result.output.split())
    assert "answers 1 sample twice with different answers" in message and key in message
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["conflicting_records"]["count"] == 1
    assert key in manifest["conflicting_records"]["first"][0]


def test_merge_refuses_a_folder_that_answers_a_sample_twice_differently(tmp_path):
    _, out = twice_answered(tmp_path)
    result = runner.invoke(app, ["merge", str(out), "--out", str(tmp_path / "merged")])
    message = " ".join(result.output.split())
    assert result.exit_code == 1 and "twice in" in message and "something else" in message
    assert not (tmp_path / "merged").exists()
