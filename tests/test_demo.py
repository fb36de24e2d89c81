"""The main job end to end: `nutrireason demo` on the real offline bundles with a scripted model,
interrupted (Ctrl-C, then SIGKILL) during evaluation and resumed; and with the real local model
on a handful of items (slow)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import new_home, real_bundle

# 0.2 s per call keeps the evaluation running long enough to be interrupted.
MODEL = "scripted/no?latency=0.2"
ARGS = ["--limit", "1"]


@pytest.fixture(scope="module")
def home(tmp_path_factory, stage_home) -> Path:
    """A fresh data home whose bundles are the real ones (nothing is downloaded) and whose
    builds are a copy of the session's stage builds, made by the same stages with the same
    settings (so the demo finds them up to date); the tests here share it."""
    return new_home(tmp_path_factory.mktemp("demo"), stage_home / "builds")


def _demo(home: Path, *extra: str) -> subprocess.Popen:
    env = os.environ | {"NUTRIREASON_HOME": str(home), "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "nutrireason", "demo", *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def _records(home: Path) -> list[dict]:
    rows = []
    for path in sorted((home / "builds" / "demo" / "runs").glob("*/records.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _wait_for_records(home: Path, at_least: int, process: subprocess.Popen,
                      timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while len(_model_records(home)) < at_least:
        assert process.poll() is None, process.stdout.read()
        assert time.monotonic() < deadline, "the demo never reached the evaluation"
        time.sleep(0.2)


def _model_records(home: Path) -> list[dict]:
    runs = home / "builds" / "demo" / "runs"
    rows = []
    for path in sorted(runs.glob("*/records.jsonl")) if runs.is_dir() else []:
        if path.parent.name.startswith(("oracle-", "reference-")):
            continue
        rows += [line for line in path.read_text().splitlines() if line.endswith("}")]
    return rows


@pytest.mark.slow
def test_demo_interrupted_twice_resumes_without_redoing_work(home):
    first = _demo(home, "--model", MODEL, *ARGS)
    _wait_for_records(home, 3, first)
    os.killpg(first.pid, signal.SIGINT)  # Ctrl-C
    output = first.communicate(timeout=120)[0]
    assert first.returncode == 130, output
    assert "run `nutrireason demo` again to resume" in output
    after_sigint = len(_model_records(home))

    second = _demo(home, "--model", MODEL, *ARGS)
    _wait_for_records(home, after_sigint + 5, second)
    os.killpg(second.pid, signal.SIGKILL)
    second.communicate(timeout=60)
    assert second.returncode == -signal.SIGKILL
    before_last = len(_model_records(home))

    third = _demo(home, "--model", MODEL, *ARGS)
    output = third.communicate(timeout=600)[0]
    assert third.returncode == 0, output
    lines = output.splitlines()
    for stage in ("recipes:", "NGQA:", "FAM annotation:", "FAM-Bench:"):
        assert any(line.startswith(stage) and "up to date with its inputs; not rebuilt" in line
                   for line in lines), stage
    keys = Counter(r["key"] for r in _records(home))
    assert keys and max(keys.values()) == 1  # no sample answered twice
    summary = next(line for line in output.splitlines() if line.startswith("samples:"))
    done = int(summary.split("(")[1].split(" already")[0].replace(",", ""))
    assert done >= before_last  # what the killed runs finished was kept
    report = home / "builds" / "demo" / "report"
    assert (report / "report.html").is_file()
    for name in ("table3.md", "fam_table1.md", "fam_radar.png"):
        assert (report / name).is_file(), name
    table = (report / "fam_table1.md").read_text()
    assert "| reference | 100.00 | 1.0000 | 1.0000 |" in table.replace("scripted/none | ", "")
    # the stage timings are printed
    assert "build FAM-Bench" in output and "evaluate, score, report" in output


@pytest.mark.slow
def test_demo_with_the_real_local_model_on_a_handful_of_items(home, tmp_path):
    pytest.importorskip("llama_cpp")
    real_bundle("smollm2")
    out = tmp_path / "demo-smollm2"
    run = _demo(home, "--limit", "0", "--task-limit", "fam.dish=1",
                "--out", str(out))
    output = run.communicate(timeout=900)[0]
    assert run.returncode == 0, output
    assert "llamacpp/smollm2" in output and " 0 errors" in output
    records = [json.loads(line) for line in
               (out / "runs" / "fam-dish" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["status"] == "ok" and r["n_calls"] == 1 for r in records)
    table = (out / "report" / "fam_table1.md").read_text()
    assert all(mode in table for mode in ("| baseline |", "| CoT |", "| KI |", "| CoT+KI |"))
