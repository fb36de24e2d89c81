"""Two runs that score the same (method, model, task, level) group are never
reported silently: `report` refuses them, naming the group and both runs, and writes nothing;
with --keep-last it shows the last run's numbers and says so on stderr and in report.html."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from nutrireason.cli import app
from tests.report.test_outcomes import scored_run


def tog_n(run: Path) -> dict[tuple[str, str], int]:
    groups = json.loads((run / "metrics.json").read_text())["groups"]
    return {(g["task"], g["level"]): g["n"] for g in groups if g["method"] == "tog"}


def test_overlapping_runs_are_refused_and_nothing_is_written(tmp_path):
    first, second = scored_run(tmp_path / "first"), scored_run(tmp_path / "second")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", str(first), str(second), "--out", str(out)])
    assert result.exit_code != 0
    message = " ".join(result.output.split())
    assert "is scored in 2 runs" in message and str(first) in message \
        and str(second) in message
    assert "--keep-last" in message and "no report was written" in message
    assert not out.exists()


def test_keep_last_shows_the_last_run_and_says_so(tmp_path):
    first = scored_run(tmp_path / "first")
    second = scored_run(tmp_path / "second", drop=("binary-complex-1", "binary-complex-2"))
    assert tog_n(first) != tog_n(second)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["report", str(first), str(second), "--out", str(out),
                                      "--keep-last"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "is scored in 2 runs" in text and "the tables show the last of them" in text
    html = (out / "report.html").read_text()
    assert 'id="overlap-warnings"' in html and "the tables show the last of them" in html
    with (out / "table3.csv").open() as handle:
        rows = [row for row in csv.DictReader(handle) if row["method"] == "tog"]
    assert rows, "table3.csv has no tog rows"
    shown = {(task, row["level"]): int(row[f"{task}_n"]) for row in rows
             for task in ("binary", "multi_label", "text_generation")}
    assert shown == tog_n(second) and shown != tog_n(first)


def test_runs_of_different_groups_report_without_warning(tmp_path):
    run = scored_run(tmp_path / "run")
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert 'id="overlap-warnings"' not in (tmp_path / "out" / "report.html").read_text()
