"""Golden outputs: the same CLI commands give the same benchmark files, records and metrics.

A small pipeline runs through the real command line (`python -m nutrireason`, one subprocess per
command) on the real offline bundles, in a fresh data home whose `bundles` links to the pulled
ones: `ngqa users`, `recipes build` (the Wikibooks default), `ngqa build`, `fam annotate`,
`fam build` (130 dish-level, 40 comparative instances), then `run` with the scripted backend
(`scripted/yes` and `scripted/echo`, no cache, one sample at a time) on 3 items each of NGQA
binary, multi-label and text generation at the standard level (plain and KAPING), the NGQA
oracle, FAM-Bench dish and rank (baseline mode) and the FAM-Bench reference, and finally one
`score --bootstrap 20` over every run (its bootstrap seed is fixed).

Every output is reduced to one sha256 digest, compared with `tests/golden/outputs.json`:

- build JSONL files: their bytes;
- build Parquet files: the frame pandas reads (columns, dtypes, rows as JSON), not the raw bytes;
- build JSON files (manifests, stats, quality, summaries): the JSON dumped with sorted keys,
  the data home's path replaced by a placeholder and the sha256 of another build file by that
  file's name (`users.parquet` holds its source path, so its raw bytes vary with the home);
- hidden files and locks under `builds/` are not outputs;
- run records, per key: `status`, `parsed`, `gold`, `parse_ok`, `meta` (with `item_id`,
  `method`, `model`, `error`) as `run:<name>/records`, and the prompts and responses
  (`requests`, `responses`, `raw`, `retrieved`, `usage`, `n_calls`, `attempts`) apart as
  `run:<name>/requests`; latencies and times are left out;
- `metrics.json` without its `run` path and latencies, and the `metrics_*.csv` tables without
  their latency rows.

The home's `builds` start as a copy of the session's stage builds (`stage_home` in
`tests/conftest.py`: the same stages with their default settings), so a command whose stage
is up to date does not build again: its outputs are the files those stages wrote, digested all
the same; `ngqa users` always rebuilds, and so does every stage whose inputs or settings
differ (`fam build` with its sizes, `ngqa build` after the new users file).
Floats in records and metrics are compared to 12 significant digits. Nothing depends on the
temporary path, the terminal width, the time or the machine. A pinned output that is missing or
different fails the test, naming it; an output the golden file does not know is only reported
(a warning).

After a change that is meant to alter outputs, rewrite the golden file and review its diff:

    NUTRIREASON_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_outputs.py

(with that variable set the test writes `tests/golden/outputs.json` and passes).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import time
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import new_home

GOLDEN = Path(__file__).parent / "golden" / "outputs.json"
UPDATE_ENV = "NUTRIREASON_UPDATE_GOLDEN"

BUILD_COMMANDS = [
    ["ngqa", "users"],
    ["recipes", "build"],
    ["ngqa", "build"],
    ["fam", "annotate"],
    ["fam", "build", "--dish-size", "130", "--rank-size", "40"],
]
RUN_OPTIONS = ["--limit", "3", "--concurrency", "1", "--no-cache", "--no-progress"]
SCRIPTED = ["--model", "scripted/yes", "--model", "scripted/echo"]
NGQA_METHODS = ["--level", "standard", "--method", "plain", "--method", "kaping", *SCRIPTED]
RUNS = {
    "ngqa-binary": ["ngqa", "--task", "binary", *NGQA_METHODS],
    "ngqa-multilabel": ["ngqa", "--task", "multilabel", *NGQA_METHODS],
    "ngqa-textgen": ["ngqa", "--task", "textgen", *NGQA_METHODS],
    "ngqa-oracle": ["ngqa", "--task", "multilabel", "--level", "complex", "--method", "oracle",
                    "--model", "none"],
    "fam-dish": ["fam", "--task", "dish", "--mode", "baseline", *SCRIPTED],
    "fam-rank": ["fam", "--task", "rank", "--mode", "baseline", *SCRIPTED],
    "fam-reference-dish": ["fam", "--task", "dish", "--mode", "reference", "--model", "none"],
    "fam-reference-rank": ["fam", "--task", "rank", "--mode", "reference", "--model", "none"],
}
SCORE_OPTIONS = ["--bootstrap", "20"]

RECORD_FIELDS = ("item_id", "method", "model", "status", "parsed", "gold", "parse_ok", "error",
                 "meta")
REQUEST_FIELDS = ("requests", "responses", "raw", "retrieved", "usage", "n_calls", "attempts")
# Machine- or time-dependent keys, dropped wherever they appear in JSON outputs.
VOLATILE_KEYS = {"latency_s", "wall_s", "finished_at", "started_at", "created_at", "elapsed_s",
                 "timestamp"}


@pytest.fixture
def home(tmp_path, stage_home) -> Path:
    """A fresh data home whose bundles are the real ones (nothing is downloaded) and whose
    builds start as a copy of the session's stage builds (see the module docstring)."""
    return new_home(tmp_path, stage_home / "builds")


class Canon:
    """Turns outputs into digests that do not depend on where or when they were made."""

    def __init__(self, home: Path, tmp: Path) -> None:
        bundles = (home / "bundles").resolve()
        pairs = [(str(home / "bundles"), "<bundles>"), (str(bundles), "<bundles>"),
                 (str(home), "<home>"), (str(tmp), "<tmp>")]
        pairs += [(old.replace("/", "\\/"), new) for old, new in pairs]  # as JSON escapes it
        self.replacements = sorted(pairs, key=lambda pair: -len(pair[0]))
        # raw sha256 of a build file -> its name: a manifest naming another build file as its
        # input says which file (whose content is pinned apart), not bytes that embed a path
        self.known: dict[str, str] = {}

    def text(self, value: str) -> str:
        for old, new in self.replacements:
            value = value.replace(old, new)
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): self.value(v) for k, v in value.items() if k not in VOLATILE_KEYS}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        if isinstance(value, float):
            return float(f"{value:.12g}")
        if isinstance(value, str):
            if value in self.known:
                return f"<sha256 of {self.known[value]}>"
            return self.text(value)
        return value

    @staticmethod
    def sha(data: bytes | str) -> str:
        return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()

    def json_digest(self, document: Any) -> str:
        return self.sha(json.dumps(self.value(document), sort_keys=True, ensure_ascii=False))

    def parquet_digest(self, path: Path) -> str:
        import pandas as pd

        frame = pd.read_parquet(path)
        payload = json.dumps({"columns": [str(c) for c in frame.columns],
                              "dtypes": [str(d) for d in frame.dtypes]}, sort_keys=True)
        body = frame.to_json(orient="split", double_precision=15, force_ascii=False)
        return self.sha(payload + "\n" + self.text(body))

    def csv_digest(self, path: Path) -> str:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
        kept = [[self.cell(cell) for cell in row] for row in rows
                if not any("latency" in cell for cell in row)]
        return self.sha(json.dumps(kept, ensure_ascii=False))

    def cell(self, cell: str) -> str:
        try:
            number = float(cell)
        except ValueError:
            return self.text(cell)
        return f"{number:.12g}" if any(c in cell for c in ".eE") else cell

    def file_digests(self, path: Path) -> tuple[str, str | None]:
        """(sha256 of the bytes, digest); JSON files get theirs from ``json_file_digest`` once
        every build file's raw sha256 is known."""
        data = path.read_bytes()
        raw = self.sha(data)
        if path.suffix == ".parquet":
            return raw, self.parquet_digest(path)
        if path.suffix == ".json":
            return raw, None
        if path.suffix == ".csv":
            return raw, self.csv_digest(path)
        return raw, raw  # JSONL and anything else: the bytes

    def json_file_digest(self, path: Path) -> str:
        return self.json_digest(json.loads(path.read_text(encoding="utf-8")))

    def records_digests(self, path: Path) -> tuple[str, str]:
        records: dict[str, dict] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["key"]] = record  # last wins, as the engine reads them
        answers = {key: {f: r.get(f) for f in RECORD_FIELDS} for key, r in records.items()}
        requests = {key: {f: r.get(f) for f in REQUEST_FIELDS} for key, r in records.items()}
        return self.json_digest(answers), self.json_digest(requests)


def pinned_files(root: Path) -> dict[str, tuple[int, int]]:
    """Every output file under ``root`` (not hidden files, not locks) with its size and mtime."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or any(part.startswith(".") for part in relative.parts):
            continue
        # Locks, and the stages' stamps: a stamp holds a digest of the source code, so it
        # changes with every commit by design (it is what makes a stage rebuild).
        if path.suffix == ".lock" or path.name.endswith("stage.json"):
            continue
        stat = path.stat()
        found[relative.as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return found


def cli(home: Path, cwd: Path, *args: str) -> None:
    env = os.environ | {"NUTRIREASON_HOME": str(home), "COLUMNS": "200", "NO_COLOR": "1"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nutrireason", *args], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600)
    assert done.returncode == 0, f"`nutrireason {' '.join(args)}` exited {done.returncode}:\n" \
                                 f"{done.stdout[-4000:]}"
    print(f"{time.perf_counter() - started:6.1f} s  nutrireason {' '.join(args)}")


def produce(home: Path, tmp: Path) -> dict[str, str]:
    """Run the pipeline; return output name -> digest."""
    canon = Canon(home, tmp)
    builds, runs = home / "builds", tmp / "runs"
    stamps: dict[str, tuple[int, int]] = {}
    futures: dict[str, Future] = {}
    with ThreadPoolExecutor(max_workers=1) as pool:
        # digest each command's new files while the next command runs
        for command in BUILD_COMMANDS:
            cli(home, tmp, *command)
            for name, stamp in pinned_files(builds).items():
                if name not in stamps:
                    stamps[name] = stamp
                    futures[name] = pool.submit(canon.file_digests, builds / name)
        for name, args in RUNS.items():
            cli(home, tmp, "run", *args, *RUN_OPTIONS, "--out", str(runs / name))
        cli(home, tmp, "score", *SCORE_OPTIONS, *(str(runs / name) for name in RUNS))
        results = {name: future.result() for name, future in futures.items()}
    for name, stamp in pinned_files(builds).items():  # written or rewritten by a later command
        if stamps.get(name) != stamp:
            results[name] = canon.file_digests(builds / name)
    canon.known = {raw: f"build:{name}" for name, (raw, _) in results.items()}
    digests = {f"build:{name}": digest or canon.json_file_digest(builds / name)
               for name, (_, digest) in results.items()}
    for name in RUNS:
        run_dir = runs / name
        answers, requests = canon.records_digests(run_dir / "records.jsonl")
        digests[f"run:{name}/records"] = answers
        digests[f"run:{name}/requests"] = requests
        metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
        metrics.pop("run", None)
        digests[f"run:{name}/metrics.json"] = canon.json_digest(metrics)
        for table in sorted(run_dir.glob("metrics_*.csv")):
            digests[f"run:{name}/{table.name}"] = canon.csv_digest(table)
    return dict(sorted(digests.items()))


@pytest.mark.slow
def test_the_same_commands_give_the_same_outputs(home, tmp_path):
    digests = produce(home, tmp_path)
    if os.environ.get(UPDATE_ENV) == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert GOLDEN.is_file(), f"no golden file {GOLDEN}: run with {UPDATE_ENV}=1 to write it"
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    changed = sorted(name for name in golden if name in digests and digests[name] != golden[name])
    missing = sorted(name for name in golden if name not in digests)
    new = sorted(name for name in digests if name not in golden)
    if new:
        warnings.warn(f"outputs not in {GOLDEN.name} (not compared): {', '.join(new)}",
                      stacklevel=1)
    lines = [f"{len(changed)} outputs differ from {GOLDEN} and {len(missing)} are missing "
             f"(outputs kept under {tmp_path}; {UPDATE_ENV}=1 rewrites the golden file):"]
    lines += [f"  differs: {name}" for name in changed]
    lines += [f"  missing: {name}" for name in missing]
    assert not changed and not missing, "\n".join(lines)
