"""One run per folder, malformed items, the manifest's final status, exit status,
a required --model and the list of known methods."""

from __future__ import annotations

import ast
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.runs import load_benchmark, run
from nutrireason.runs.engine import RunFolderError
from nutrireason.runs.lock import LOCK_FILE, RunLock, RunLocked
from nutrireason.runs.manifest import effective_status, read_manifest
from nutrireason.runs.policy import NO_MODEL, ErrorAllowance, resolve_models
from nutrireason.runs.records import RECORDS_FILE, RecordLog
from tests.runs.test_engine import config, lines, write_items

# A CLI process whose model logs every call it answers (one line per call) to a file, answers
# slowly (latency), fails the prompts ending in 7 while FAIL=1, and while GATE names a file
# that does not exist yet, waits for it (so a run holds its folder as long as a test needs).
RUNNER = '''
import os, sys, time
from pathlib import Path
from nutrireason.models.errors import ModelError
from nutrireason.models.scripted import register

calls = Path(sys.argv[1])

def logged(request):
    gate, deadline = os.environ.get("GATE"), time.monotonic() + 30
    while gate and not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    prompt = request.messages[-1].text()
    with calls.open("a") as handle:
        handle.write(prompt + "\\n")
    if os.environ.get("FAIL") == "1" and prompt.endswith("7"):
        raise ModelError("bad_request", "scripted failure")
    return "fine"

register("logged", logged)
from nutrireason.cli import app
app(sys.argv[2:], prog_name="nutrireason")
'''
SLOW = "scripted/logged?latency=0.03"


def flat(text: str) -> str:
    """Output with whitespace normalised (messages must not depend on terminal width)."""
    return " ".join(text.split())


def cli(tmp_path: Path, bench: Path, out: Path, calls: str, *extra: str) -> list[str]:
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    return [sys.executable, str(script), str(tmp_path / calls), "run", str(bench),
            "--out", str(out), "--model", SLOW, "--concurrency", "2", "--no-cache",
            "--no-progress", *extra]


def env(fail: bool = False, gate: Path | None = None) -> dict[str, str]:
    extra = {"GATE": str(gate)} if gate else {}
    return os.environ | {"COLUMNS": "60", "NO_COLOR": "1", "FAIL": "1" if fail else "0"} | extra


def start(command: list[str], out: Path, gate: Path | None = None) -> subprocess.Popen:
    """Start a run and return once it holds the folder and is running (and, without a gate,
    has written a record)."""
    process = subprocess.Popen(command, env=env(gate=gate), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not _started(out, gated=gate is not None):
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.02)
    return process


def _started(out: Path, gated: bool) -> bool:
    records = out / RECORDS_FILE
    written = records.exists() and (gated or records.stat().st_size > 0)
    if not (out / LOCK_FILE).exists() or not written:
        return False
    try:
        return read_manifest(out)["status"] == "running"
    except (TypeError, ValueError):  # not written yet
        return False


def logged_calls(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def keys(out: Path) -> list[str]:
    return [r["key"] for r in lines(out)]


# 1. one run per folder ---------------------------------------------------------------------

def test_a_second_identical_run_is_refused_and_nothing_is_lost_or_called_twice(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 80)
    out = tmp_path / "run"
    gate = tmp_path / "gate"
    first = start(cli(tmp_path, bench, out, "calls-a"), out, gate)
    second = subprocess.run(cli(tmp_path, bench, out, "calls-b"), env=env(),
                            capture_output=True, text=True, timeout=60)
    gate.touch()
    output_a, _ = first.communicate(timeout=60)
    message = flat(second.stderr + second.stdout)
    assert second.returncode == 1, message
    assert str(out) in message and f"pid {first.pid}" in message
    assert "another run holds this folder" in message
    assert first.returncode == 0, output_a
    assert logged_calls(tmp_path / "calls-b") == []  # the second run sent nothing
    calls = logged_calls(tmp_path / "calls-a")
    assert len(calls) == len(set(calls)) == 80  # no duplicate call
    assert sorted(keys(out)) == sorted(set(keys(out))) and len(keys(out)) == 80  # none lost
    assert not (out / LOCK_FILE).exists()


def test_a_concurrent_retry_errors_run_is_refused_and_records_survive(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 90)
    out = tmp_path / "run"
    seeded = subprocess.run(cli(tmp_path, bench, out, "calls-0", "--limit", "30"),
                            env=env(fail=True), capture_output=True, text=True, timeout=60)
    assert seeded.returncode == 1  # q7, q17, q27 failed
    gate = tmp_path / "gate"
    writer = start(cli(tmp_path, bench, out, "calls-a"), out, gate)
    retry = subprocess.run(cli(tmp_path, bench, out, "calls-b", "--retry-errors"), env=env(),
                           capture_output=True, text=True, timeout=60)
    gate.touch()
    writer.communicate(timeout=60)
    assert retry.returncode == 1 and f"pid {writer.pid}" in flat(retry.stderr + retry.stdout)
    assert logged_calls(tmp_path / "calls-b") == []
    assert len(logged_calls(tmp_path / "calls-a")) == 60  # only the items not yet run
    assert len(keys(out)) == len(set(keys(out))) == 90  # every record kept
    errored = {r["item_id"] for r in lines(out) if r["status"] == "error"}
    assert errored == {"q7", "q17", "q27"}
    again = subprocess.run(cli(tmp_path, bench, out, "calls-c", "--retry-errors"), env=env(),
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(logged_calls(tmp_path / "calls-c")) == ["question 17", "question 27",
                                                         "question 7"]
    assert len(keys(out)) == 90 and {r["status"] for r in lines(out)} == {"ok"}


def test_a_stale_lock_from_a_dead_process_is_taken_over(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "run"
    out.mkdir()
    (out / LOCK_FILE).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(),
                                             "started_at": time.time()}))
    summary = run(config(tmp_path))
    assert summary.ok == 20 and summary.status == "complete"
    assert not (out / LOCK_FILE).exists()


def test_a_held_lock_refuses_an_in_process_run_and_nothing_is_written(tmp_path):
    out = tmp_path / "run"
    with RunLock(out):
        with pytest.raises(RunLocked, match=rf"{out}.*pid {os.getpid()}"):
            run(config(tmp_path))
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]
    assert run(config(tmp_path)).ok == 20


# 2. malformed items --------------------------------------------------------------------------

def test_a_bad_item_in_the_middle_is_an_item_error_and_the_run_goes_on(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 20)
    rows = bench.read_text().splitlines()
    rows[10] = json.dumps({"id": "q10", "gold": "x"})  # no prompt, line 11
    rows[14] = json.dumps({"id": "q14", "messages": "not a list"})  # line 15
    bench.write_text("\n".join(rows) + "\n")
    summary = run(config(tmp_path))
    assert (summary.ok, summary.errors, summary.status) == (18, 2, "partial")
    bad = {r["item_id"]: r for r in lines(tmp_path / "run") if r["status"] == "error"}
    assert set(bad) == {"q10", "q14"}
    assert bad["q10"]["error"]["kind"] == "bad_item" and bad["q10"]["error"]["line"] == 11
    assert f"{bench} line 11" in bad["q10"]["error"]["message"]
    assert "'prompt'" in bad["q10"]["error"]["message"]
    assert f"{bench} line 15" in bad["q14"]["error"]["message"]
    assert all(r["n_calls"] == 0 for r in bad.values())  # nothing sent for them
    manifest = read_manifest(tmp_path / "run")
    assert manifest["status"] == "partial"
    assert manifest["counts"] == {"planned": 20, "ok": 18, "error": 2, "missing": 0}
    assert run(config(tmp_path)).skipped == 20  # a re-run does not die at the same item


def test_a_file_that_is_not_utf8_names_file_and_line(tmp_path):
    bench = tmp_path / "items.jsonl"
    bench.write_bytes(b'{"id": 1, "prompt": "a"}\n{"id": 2, "prompt": "caf\xe9"}\n')
    with pytest.raises(DataError, match=r"items.jsonl: line 2 is not UTF-8"):
        load_benchmark(bench)


# 3. the manifest's final status --------------------------------------------------------------

def test_every_sample_errored_is_failed(tmp_path):
    summary = run(config(tmp_path, models=["scripted/echo?error_rate=1"], cache=False))
    manifest = read_manifest(tmp_path / "run")
    assert summary.status == manifest["status"] == "failed"
    assert manifest["counts"] == {"planned": 20, "ok": 0, "error": 20, "missing": 0}


def test_a_full_disk_mid_run_leaves_interrupted_not_running(tmp_path, monkeypatch):
    append = RecordLog.append
    written = []

    def disk_full(self, record):
        if len(written) == 5:
            raise OSError(28, "No space left on device")
        written.append(record.key)
        append(self, record)

    monkeypatch.setattr(RecordLog, "append", disk_full)
    with pytest.raises(RunFolderError, match="No space.*run the same command again"):
        run(config(tmp_path, concurrency=1))
    manifest = read_manifest(tmp_path / "run")
    assert manifest["status"] == "interrupted" and "No space left" in manifest["error"]
    assert manifest["counts"]["ok"] == 5 and manifest["counts"]["missing"] == 15
    assert not (tmp_path / "run" / LOCK_FILE).exists()


def test_sigterm_marks_the_run_interrupted_and_releases_the_folder(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 200)
    out = tmp_path / "run"
    process = start(cli(tmp_path, bench, out, "calls"), out)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 130, output
    manifest = read_manifest(out)
    assert manifest["status"] == "interrupted"
    counts = manifest["counts"]
    assert 0 < counts["ok"] < 200 and counts["ok"] + counts["missing"] == 200
    assert counts["ok"] == len(keys(out)) and not (out / LOCK_FILE).exists()


def test_a_killed_run_reads_as_interrupted_and_the_next_start_says_so(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 60)
    out = tmp_path / "run"
    process = start(cli(tmp_path, bench, out, "calls"), out)
    process.kill()
    process.wait(timeout=10)
    manifest = read_manifest(out)
    assert manifest["status"] == "running" and manifest["owner"]["pid"] == process.pid
    assert effective_status(manifest) == "interrupted"
    resumed = subprocess.run(cli(tmp_path, bench, out, "calls"), env=env(),
                             capture_output=True, text=True, timeout=60)
    output = flat(resumed.stdout + resumed.stderr)
    assert resumed.returncode == 0, output
    assert f"pid {process.pid}) stopped without finishing" in output
    assert read_manifest(out)["status"] == "complete"
    assert len(keys(out)) == len(set(keys(out))) == 60


def test_score_says_when_the_run_is_not_complete(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 4)
    bench.write_text(bench.read_text() + json.dumps({"id": "bad"}) + "\n")
    run(config(tmp_path))
    result = CliRunner().invoke(app, ["score", str(tmp_path / "run"), "--bootstrap", "0"],
                                env={"COLUMNS": "60", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert f"the run in {tmp_path / 'run'} is partial (4 ok, 1 errors, 0 not run of 5)" in flat(
        result.output)


# 4. exit status ------------------------------------------------------------------------------

def invoke(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-cache", "--no-progress"],
                              env={"COLUMNS": "60", "NO_COLOR": "1"})


@pytest.fixture
def one_bad_of_20(tmp_path) -> Path:
    bench = write_items(tmp_path / "items.jsonl", 20)
    rows = bench.read_text().splitlines()
    rows[3] = json.dumps({"id": "q3"})
    bench.write_text("\n".join(rows) + "\n")
    return bench


@pytest.mark.parametrize(("allow", "code"), [(None, 1), ("1", 0), ("5%", 0), ("4%", 1),
                                              ("0", 1)])
def test_errors_exit_non_zero_unless_allowed(tmp_path, one_bad_of_20, allow, code):
    extra = ["--allow-errors", allow] if allow else []
    result = invoke(str(one_bad_of_20), "--out", str(tmp_path / "run"), "--model",
                    "scripted/echo", *extra)
    output = flat(result.output)
    assert result.exit_code == code, output
    assert "run partial: 19 ok, 1 errors, 0 not run of 20" in output
    if code:
        assert "1 of 20 samples ended in an error" in output


@pytest.mark.parametrize("allow", [[], ["--allow-errors", "100%"]])
def test_a_run_whose_every_sample_errored_always_exits_non_zero(tmp_path, allow):
    bench = write_items(tmp_path / "items.jsonl", 5)
    result = invoke(str(bench), "--out", str(tmp_path / "run"), "--model",
                    "scripted/echo?error_rate=1", "--max-attempts", "1", *allow)
    assert result.exit_code == 1
    assert "every sample (5 of 5) ended in an error" in flat(result.output)


def test_a_bad_allow_errors_value_is_refused_before_running(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 5)
    result = invoke(str(bench), "--out", str(tmp_path / "run"), "--model", "scripted/echo",
                    "--allow-errors", "some")
    assert result.exit_code == 1
    assert "--allow-errors 'some' is not a count or a percentage" in flat(result.output)
    assert not (tmp_path / "run").exists()


def test_allowance_parsing():
    assert ErrorAllowance.parse("5").allowed(1000) == 5
    assert ErrorAllowance.parse("2%").allowed(250) == 5
    assert ErrorAllowance.parse("2.5%").allowed(100) == 2
    assert ErrorAllowance.parse(None).allowed(10) == 0
    for bad in ("-1", "1.5", "101%", "x%"):
        with pytest.raises(DataError):
            ErrorAllowance.parse(bad)


# 5. --model is required ----------------------------------------------------------------------

def test_run_without_model_is_refused_with_an_example(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 5)
    result = invoke(str(bench), "--out", str(tmp_path / "run"))
    output = flat(result.output)
    assert result.exit_code == 1
    assert "--model is required" in output and "--model openai/gpt-4o-mini" in output
    assert "--model none" in output
    assert not (tmp_path / "run").exists()


def test_model_none_is_only_for_methods_that_need_no_model(tmp_path):
    assert resolve_models(None, ["fam-reference"]) == [NO_MODEL]
    assert resolve_models(["none"], ["oracle"]) == [NO_MODEL]
    assert resolve_models(["scripted/echo"], ["prompt"]) == ["scripted/echo"]
    bench = write_items(tmp_path / "items.jsonl", 5)
    result = invoke(str(bench), "--out", str(tmp_path / "run"), "--model", "none")
    assert result.exit_code == 1
    assert "--model none answers nothing, but method 'prompt' asks a model" in flat(
        result.output)


# 6. the list of known methods ----------------------------------------------------------------

def test_unknown_method_lists_each_known_method_once(tmp_path):
    bench = write_items(tmp_path / "items.jsonl", 5)
    result = invoke(str(bench), "--out", str(tmp_path / "run"), "--model", "scripted/echo",
                    "--method", "nope")
    output = flat(result.output)
    assert result.exit_code == 1 and "unknown method 'nope'" in output
    known = output.split("known: ", 1)[1]
    names = ast.literal_eval(known[:known.rindex("]") + 1])
    assert len(names) == len(set(names)) > 20, names
    assert {"fam-baseline", "fam-baseline[image]", "fam-baseline[text+image]", "oracle",
            "prompt"} <= set(names)
