"""Tables (Markdown, CSV, LaTeX) and plots of the report."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nutrireason.display.table import latex_escape
from nutrireason.errors import DataError
from nutrireason.report import build_report
from tests.report import LEVELS, METHODS, metric_value, write_run, write_runs

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SAMPLE_RUNS = Path("/tmp/sample_runs")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tables")
    build_report(write_runs(root / "runs"), root / "out")
    return root / "out"


def test_all_files_written(report):
    names = {p.name for p in report.iterdir()}
    assert names == {f"{stem}.{ext}" for stem, exts in {
        "table3": "md csv tex", "efficiency": "md csv png svg", "retrieval": "md csv png svg",
        "comparison": "md csv png svg",  # the runs' methods share items: compared
        "report": "html"}.items() for ext in exts.split()}


def test_table3_markdown(report):
    lines = (report / "table3.md").read_text().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    # Each task opens with its n, and values carry their 95 % interval.
    assert header[:7] == ["Level", "Method", "Binary n", "Binary Accuracy", "Binary Recall",
                          "Binary Precision", "Binary F1"]
    assert "Multi-label F1" in header and "Text generation ROUGE-L" in header
    assert "Text generation BERT" not in header  # no bertscore_f1 in these runs
    assert "Model" not in header  # a single model
    body = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:] if line]
    assert [(row[0], row[1]) for row in body] == [(lv, m) for lv in LEVELS for m in METHODS]
    row = body[3]  # standard, tog_kg
    expected = metric_value("standard", "tog_kg", "binary", "f1")
    assert row[header.index("Binary F1")] == f"{expected:.4f} [0.550, 0.650]"
    assert row[header.index("Binary Accuracy")] == "0.6001 [0.550, 0.650]"
    assert row[header.index("Text generation BLEU")] == "0.6204 [0.570, 0.670]"
    assert row[header.index("Binary n")] == "2"


def test_table3_csv_has_missing_cells_empty(tmp_path):
    runs = write_runs(tmp_path / "runs")
    data = json.loads((runs[0] / "metrics.json").read_text())
    data["groups"] = [g for g in data["groups"]
                      if not (g["method"] == "plain" and g["task"] == "multi_label")]
    (runs[0] / "metrics.json").write_text(json.dumps(data))
    build_report(runs, tmp_path / "out")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "table3.csv").read_text())))
    assert len(rows) == 6
    first = rows[0]
    assert (first["level"], first["method"]) == ("sparse", "plain")
    assert first["multi_label_f1"] == "" and first["binary_f1"] == "0.3004"
    assert rows[1]["multi_label_accuracy"] == "0.5101"


def test_table3_latex(report):
    tex = (report / "table3.tex").read_text()
    # n opens each task group; the LaTeX keeps values only (no intervals).
    assert tex.startswith("\\begin{tabular}{ll|rrrrr|rrrrr|rrrrr}")
    assert "\\multicolumn{5}{|c}{Binary}" in tex and "\\multicolumn{5}{|c}{Text generation}" in tex
    assert "sparse & plain & 2 & 0.3001 & 0.3003 &" in tex and "[" not in tex
    assert "tog\\_kg" in tex and "tog_kg" not in tex.replace("tog\\_kg", "")
    assert tex.rstrip().endswith("\\end{tabular}")
    assert tex.count("\\\\") == 2 + 6  # two header rows, six body rows


def test_latex_escape():
    assert latex_escape("a_b & 50% #1 $x$ {y} ~^\\") == (
        "a\\_b \\& 50\\% \\#1 \\$x\\$ \\{y\\} \\textasciitilde{}\\textasciicircum{}"
        "\\textbackslash{}")


def test_bertscore_column_and_model_column(tmp_path):
    runs = [write_run(tmp_path / "a", "sparse", bertscore=True)]
    other = write_run(tmp_path / "b", "standard")
    data = json.loads((other / "metrics.json").read_text())
    for group in data["groups"]:
        group["model"] = "other/model"
    (other / "metrics.json").write_text(json.dumps(data))
    build_report(runs + [other], tmp_path / "out")
    header = (tmp_path / "out" / "table3.md").read_text().splitlines()[0]
    assert "| Model |" in header and "Text generation BERT" in header
    assert "\\textbackslash" not in (tmp_path / "out" / "table3.tex").read_text()


def test_efficiency_and_retrieval_tables(report):
    eff = list(csv.DictReader(io.StringIO((report / "efficiency.csv").read_text())))
    assert [(r["method"], float(r["calls_per_sample"]), float(r["prompt_tokens"]))
            for r in eff] == [("plain", 1.0, 100.0), ("tog_kg", 3.0, 200.0)]
    assert "| tog_kg | 18 | 3.00 | 200.0 | 5.0 | 0.5000 |" in (report / "efficiency.md").read_text()
    ret = (report / "retrieval.md").read_text()
    assert "| sparse | Binary | tog_kg | 0.5000 | 0.7500 | 0.6000 |" in ret
    assert "plain" not in ret  # plain reports no retrieval
    rows = list(csv.DictReader(io.StringIO((report / "retrieval.csv").read_text())))
    assert len(rows) == 9 and float(rows[0]["f1_low"]) == pytest.approx(0.55)


def test_plots_are_valid_png_and_svg(report):
    for name in ("efficiency", "retrieval"):
        assert (report / f"{name}.png").read_bytes()[:8] == PNG_MAGIC
        root = ET.fromstring((report / f"{name}.svg").read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert "<dc:date>" not in (report / f"{name}.svg").read_text()


def test_plots_are_deterministic(tmp_path, report):
    build_report(write_runs(tmp_path / "runs"), tmp_path / "out")
    for name in ("efficiency.svg", "retrieval.svg", "efficiency.png", "table3.tex"):
        assert (tmp_path / "out" / name).read_bytes() == (report / name).read_bytes(), name


def test_missing_metrics_names_file_and_command(tmp_path):
    run = write_run(tmp_path / "run", "sparse")
    (run / "metrics.json").unlink()
    with pytest.raises(DataError, match="nutrireason score") as info:
        build_report([run], tmp_path / "out")
    assert str(run / "metrics.json") in str(info.value)


def test_bad_metrics_names_field(tmp_path):
    run = write_run(tmp_path / "run", "sparse")
    data = json.loads((run / "metrics.json").read_text())
    del data["groups"][1]["task"]
    (run / "metrics.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"groups\[1\]\.task"):
        build_report([run], tmp_path / "out")


@pytest.mark.skipif(not SAMPLE_RUNS.is_dir(), reason="no sample runs in /tmp/sample_runs "
                    "(developer data, not in CI)")
def test_real_sample_runs(tmp_path):
    from nutrireason.runs.records import read_records

    runs = []
    for source in sorted(SAMPLE_RUNS.iterdir()):
        run = tmp_path / source.name
        shutil.copytree(source, run)
        records = read_records(run)
        groups = []
        for method in dict.fromkeys(r.method for r in records):
            mine = [r for r in records if r.method == method]
            accuracy = sum(r.parse_ok and r.parsed == r.gold for r in mine) / len(mine)
            meta = mine[0].meta
            groups.append({"method": method, "model": mine[0].model, "task": meta["task"],
                           "level": meta["level"], "n": len(mine), "errors": 0,
                           "error_rate": 0.0,
                           "metrics": {"accuracy": {"value": accuracy, "low": accuracy,
                                                    "high": accuracy}},
                           "efficiency": None, "retrieval": None})
        (run / "metrics.json").write_text(json.dumps({
            "run": run.name, "records": len(records), "bertscore_model": None,
            "groups": groups, "breakdowns": {}}))
        runs.append(run)
    page = build_report(runs, tmp_path / "out")
    assert "<table" in page.read_text()
    table = (tmp_path / "out" / "table3.md").read_text()  # n and intervals
    assert re.search(r"\| sparse \| oracle \| \d+ \| 1\.0000 \[1\.000, 1\.000\] \|", table)
