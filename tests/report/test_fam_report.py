"""FAM-Bench in the report: Table 1, the modality table, the radar plot, the HTML section and
task-aware outcomes, for FAM-only runs and for NGQA and FAM runs together."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from nutrireason.display.groups import groups_frame
from nutrireason.display.table import to_markdown
from nutrireason.fam.report import fam_label, fam_method, fam_modality, fam_table1
from nutrireason.ngqa.report import table3
from nutrireason.report import build_report
from nutrireason.schema import Record, record_key
from tests.report import page_samples, stat, write_run, write_runs, write_sample_scores

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MODEL = "scripted/test"
CONDITIONS = ("hypertension", "type_2_diabetes", "chronic_kidney_disease", "gerd", "nafld",
              "ibs", "osteoporosis", "stroke", "cardiovascular_disease", "obesity", "gout",
              "celiac_disease", "iron_deficiency_anemia")
# Hand-picked values per method; listed out of display order on purpose.
DISH = {  # accuracy, macro F1, micro F1, micro P, micro R, macro strict, micro strict, unparseable
    "fam-reference": (1.0, 0.9, 0.95, 0.96, 0.94, 0.85, 0.9, 0.0),
    "fam-cot-ki": (0.8633, 0.7012, 0.7345, 0.75, 0.72, 0.6001, 0.6502, 0.005),
    "fam-baseline": (0.7753, 0.61234, 0.6543, 0.66, 0.65, 0.5011, 0.5522, 0.015),
    "fam-cot": (0.8012, 0.6333, 0.6678, 0.68, 0.66, 0.5234, 0.5678, 0.01),
    "fam-ki": (0.8421, 0.6801, 0.7001, 0.71, 0.69, 0.5801, 0.6001, 0.0),
}
RANK = {  # top-1, MRR, Kendall tau, CTC, unparseable
    "fam-cot-ki": (0.5575, 0.7012, 0.3456, 0.8123, 0.0),
    "fam-baseline": (0.41, 0.6001, -0.1234, 0.7001, 0.02),
    "fam-cot": (0.45, 0.6234, 0.1111, 0.7345, 0.0),
    "fam-ki": (0.5, 0.6666, 0.2222, 0.7777, 0.0),
}  # fam-reference has no ranking group: its Task 2 cells are "-"
VARIANTS = {  # (Task 1 accuracy, Task 2 top-1) of the input variants of CoT+KI
    "fam-cot-ki[text+image]": (0.8701, 0.6),
    "fam-cot-ki[image]": (0.6125, 0.3333),
}
METHODS = (*DISH, *VARIANTS)
DISH_NAMES = ("accuracy", "rationale_macro_f1", "rationale_micro_f1",
              "rationale_micro_precision", "rationale_micro_recall",
              "rationale_macro_f1_strict", "rationale_micro_f1_strict", "unparseable_rate")
RANK_NAMES = ("top1_accuracy", "mrr", "kendall_tau", "ctc", "unparseable_rate")


def fam_group(method: str, task: str, metrics: dict[str, float], model: str = MODEL) -> dict:
    return {"method": method, "model": model, "task": task, "level": "", "n": 40,
            "errors": 0, "error_rate": 0.0,
            "metrics": {name: stat(value) for name, value in metrics.items()},
            "efficiency": {"calls_per_sample": 1.0, "prompt_tokens": 300.0,
                           "completion_tokens": 40.0, "latency_s": 1.5},
            "retrieval": None}


def condition_accuracy(method: str, index: int) -> float:
    return round(0.3 + 0.03 * index + 0.05 * METHODS.index(method), 4)


def condition_rows(methods: list[str], model: str = MODEL) -> list[dict[str, Any]]:
    return [{"method": method, "model": model, "task": "fam_dish", "condition": condition,
             "n": 10, "metrics": {"accuracy": stat(condition_accuracy(method, i)),
                                  "rationale_macro_f1": stat(0.5)}}
            for method in methods for i, condition in enumerate(CONDITIONS)]


def fam_record(method: str, task: str, index: int, *, right: bool,
               model: str = MODEL) -> Record:
    item_id = f"fam-{task}-{index:04d}"
    if task == "fam_dish":
        gold = {"decision": "not_recommend", "rationale": ["high_sodium_foods"]}
        parsed = dict(gold) if right else {"decision": "recommend", "rationale": []}
    else:
        gold = {"ranking": ["B", "A", "C"]}
        parsed = {"ranking": ["B", "C", "A"] if right else ["A", "B", "C"]}
    question = f"Is dish {index} suitable for a user with hypertension ({task})?"
    return Record(
        key=record_key(item_id, method, model), item_id=item_id, method=method, model=model,
        status="ok", parsed=parsed, parse_ok=True, gold=gold,
        requests=[{"messages": [{"role": "user", "content": question}], "settings": {}}],
        responses=[json.dumps(parsed)], usage={"prompt_tokens": 300, "completion_tokens": 40},
        latency_s=1.5, n_calls=1,
        meta={"task": task, "question": question, "conditions": ["hypertension"]},
    )


def write_fam_run(run_dir: Path, groups: list[dict], conditions: list[dict],
                  records: list[Record]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "records.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    write_sample_scores(run_dir, records)
    (run_dir / "metrics.json").write_text(json.dumps({
        "run": run_dir.name, "records": len(records), "bertscore_model": None,
        "groups": groups, "breakdowns": {"condition": conditions, "diet": []},
    }), encoding="utf-8")
    (run_dir / "manifest.json").write_text("{}", encoding="utf-8")
    return run_dir


def text_run(run_dir: Path, *, with_conditions: bool = True) -> Path:
    """The five text-input modes: both tasks (the reference only Task 1)."""
    groups = [fam_group(m, "fam_dish", dict(zip(DISH_NAMES, v, strict=True)))
              for m, v in DISH.items()]
    groups += [fam_group(m, "fam_rank", dict(zip(RANK_NAMES, v, strict=True)) | {
        "ctc_pairs": 120.0, "ctc_coverage": 0.9}) for m, v in RANK.items()]
    records = [fam_record(m, task, i, right=i == 0) for m in ("fam-baseline", "fam-cot-ki")
               for task in ("fam_dish", "fam_rank") for i in range(2)]
    conditions = condition_rows(list(DISH)) if with_conditions else []
    return write_fam_run(run_dir, groups, conditions, records)


def variant_run(run_dir: Path) -> Path:
    """CoT+KI with text+image and with image-only input."""
    groups = []
    for method, (accuracy, top1) in VARIANTS.items():
        groups.append(fam_group(method, "fam_dish", {"accuracy": accuracy,
                                                     "unparseable_rate": 0.0}))
        groups.append(fam_group(method, "fam_rank", {"top1_accuracy": top1}))
    records = [fam_record(m, "fam_dish", 0, right=True) for m in VARIANTS]
    return write_fam_run(run_dir, groups, condition_rows(list(VARIANTS)), records)


def fam_runs(root: Path) -> list[Path]:
    return [text_run(root / "fam-text"), variant_run(root / "fam-variants")]


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def frame_of(runs: list[Path]):
    return groups_frame([read_json(run / "metrics.json") for run in runs])


def body(table) -> dict[str, list[str]]:
    """Rows by "model | mode", cells by column label (Task 1 labels prefixed "1:", Task 2 "2:")."""
    labels = [("1:" if "1" in c.group else "2:") + c.label for c in table.columns]
    return {f"{row[0]} | {row[1]}": dict(zip(labels, row[2:], strict=True))
            for row in table.rows}


@pytest.fixture(scope="module")
def fam_report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fam")
    build_report(fam_runs(root / "runs"), root / "out")
    return root / "out"


# --- method names ----------------------------------------------------------------------------


def test_fam_method_names():
    assert fam_method("fam-cot-ki") == ("cot-ki", "text")
    assert fam_method("fam-cot-ki[text+image]") == ("cot-ki", "text+image")
    assert fam_method("fam-baseline[image]") == ("baseline", "image")
    assert [fam_label(m) for m in ("fam-baseline", "fam-cot", "fam-ki", "fam-cot-ki",
                                   "fam-reference", "fam-cot-ki[text+image]",
                                   "fam-cot-ki[image]")] == [
        "baseline", "CoT", "KI", "CoT+KI", "reference", "CoT+KI (text+image)", "CoT+KI (image)"]
    assert fam_label("fam-new-mode") == "new-mode"


# --- Table 1 ---------------------------------------------------------------------------------


def test_fam_table1_cells(tmp_path):
    table = fam_table1(frame_of(fam_runs(tmp_path)))
    assert table is not None
    assert [c.label for c in table.index] == ["Model", "Mode"]
    assert [c.label for c in table.columns] == [
        "Acc.", "Macro-F1", "Micro-F1", "Macro-F1 strict", "Micro-F1 strict", "Unparseable",
        "Top-1", "MRR", "Kendall tau", "CTC", "Unparseable"]
    assert table.group_spans() == [("", 2), ("Task 1: dish suitability", 6),
                                   ("Task 2: ranking", 5)]
    rows = body(table)
    assert list(rows) == [f"{MODEL} | {mode}" for mode in (
        "baseline", "CoT", "KI", "CoT+KI", "reference", "CoT+KI (text+image)",
        "CoT+KI (image)")]
    baseline = rows[f"{MODEL} | baseline"]
    assert baseline == {"1:Acc.": "77.53", "1:Macro-F1": "0.6123", "1:Micro-F1": "0.6543",
                        "1:Macro-F1 strict": "0.5011", "1:Micro-F1 strict": "0.5522",
                        "1:Unparseable": "1.50", "2:Top-1": "41.00", "2:MRR": "0.6001",
                        "2:Kendall tau": "-0.1234", "2:CTC": "0.7001", "2:Unparseable": "2.00"}
    reference = rows[f"{MODEL} | reference"]
    assert reference["1:Acc."] == "100.00" and reference["1:Unparseable"] == "0.00"
    assert {reference[k] for k in reference if k.startswith("2:")} == {"-"}
    image = rows[f"{MODEL} | CoT+KI (image)"]
    assert (image["1:Acc."], image["2:Top-1"], image["1:Macro-F1"]) == ("61.25", "33.33", "-")


def test_fam_table1_files(fam_report):
    lines = (fam_report / "fam_table1.md").read_text().splitlines()
    assert lines[0].startswith("| Model | Mode | Task 1: dish suitability Acc. |")
    assert f"| {MODEL} | CoT+KI | 86.33 | 0.7012 | 0.7345 | 0.6001 | 0.6502 | 0.50 | 55.75 " \
           "| 0.7012 | 0.3456 | 0.8123 | 0.00 |" in lines
    rows = list(csv.DictReader(io.StringIO((fam_report / "fam_table1.csv").read_text())))
    assert [(r["method"], r["mode"], r["input"]) for r in rows][-2:] == [
        ("fam-cot-ki[text+image]", "cot-ki", "text+image"), ("fam-cot-ki[image]", "cot-ki",
                                                              "image")]
    assert rows[0]["fam_dish_accuracy"] == "0.7753" and rows[0]["fam_dish_n"] == "40"
    assert rows[4]["method"] == "fam-reference" and rows[4]["fam_rank_top1_accuracy"] == ""
    tex = (fam_report / "fam_table1.tex").read_text()
    assert tex.startswith("\\begin{tabular}{ll|rrrrrr|rrrrr}")
    assert "\\multicolumn{6}{|c}{Task 1: dish suitability}" in tex
    assert "\\multicolumn{5}{|c}{Task 2: ranking}" in tex
    assert " & CoT+KI (image) & 61.25 & - &" in tex  # the repeated model is left blank
    assert tex.count("scripted/test") == 1


def test_fam_table1_two_models(tmp_path):
    other = text_run(tmp_path / "a")
    data = read_json(other / "metrics.json")
    for group in data["groups"]:
        group["model"] = "other/model"
    (other / "metrics.json").write_text(json.dumps(data))
    table = fam_table1(frame_of([text_run(tmp_path / "b"), other]))
    assert table is not None
    assert [row[0] for row in table.rows] == [MODEL] * 5 + ["other/model"] * 5


def test_fam_table1_only_task1(tmp_path):
    run = text_run(tmp_path / "run")
    data = read_json(run / "metrics.json")
    data["groups"] = [g for g in data["groups"] if g["task"] == "fam_dish"]
    (run / "metrics.json").write_text(json.dumps(data))
    table = fam_table1(frame_of([run]))
    assert table is not None and {c.group for c in table.columns} == {"Task 1: dish suitability"}
    assert fam_modality(frame_of([run])) is None


# --- Table 2 ---------------------------------------------------------------------------------


def test_fam_modality_deltas(tmp_path):
    table = fam_modality(frame_of(fam_runs(tmp_path)))
    assert table is not None
    assert [c.label for c in table.columns] == ["T+I", "T-only", "I-only", "Δimg", "Δtxt"] * 2
    # Task 1: 87.01 - 86.33 = +0.68 and 87.01 - 61.25 = +25.76;
    # Task 2: 60.00 - 55.75 = +4.25 and 60.00 - 33.33 = +26.67.
    assert table.rows == [[MODEL, "CoT+KI", "87.01", "86.33", "61.25", "+0.68", "+25.76",
                           "60.00", "55.75", "33.33", "+4.25", "+26.67"]]


def test_fam_modality_missing_and_negative(tmp_path):
    run = variant_run(tmp_path / "run")
    data = read_json(run / "metrics.json")
    data["groups"] = [g for g in data["groups"] if g["method"] != "fam-cot-ki[text+image]"]
    data["groups"].append(fam_group("fam-ki[text+image]", "fam_dish", {"accuracy": 0.8}))
    data["groups"].append(fam_group("fam-ki", "fam_dish", {"accuracy": 0.8421}))
    (run / "metrics.json").write_text(json.dumps(data))
    table = fam_modality(frame_of([run]))
    assert table is not None
    rows = {row[1]: row[2:] for row in table.rows}
    assert list(rows) == ["KI", "CoT+KI"]
    assert rows["KI"][:5] == ["80.00", "84.21", "-", "-4.21", "-"]  # 80.00 - 84.21
    assert rows["KI"][5:] == ["-"] * 5  # no Task 2 group for KI
    assert rows["CoT+KI"][:5] == ["-", "-", "61.25", "-", "-"]


def test_no_modality_table_for_text_only(tmp_path):
    run = text_run(tmp_path / "run")
    assert fam_modality(frame_of([run])) is None
    build_report([run], tmp_path / "out")
    assert not list((tmp_path / "out").glob("fam_modality.*"))
    assert "fam_modality" not in (tmp_path / "out" / "report.html").read_text()


def test_fam_modality_files(fam_report):
    md = (fam_report / "fam_modality.md").read_text()
    assert "| Model | Mode | Task 1: accuracy T+I |" in md and "Task 2: top-1 Δtxt" in md
    tex = (fam_report / "fam_modality.tex").read_text()
    assert "$\\Delta$img" in tex and "Δ" not in tex
    rows = list(csv.DictReader(io.StringIO((fam_report / "fam_modality.csv").read_text())))
    assert len(rows) == 1
    assert float(rows[0]["fam_dish_delta_text"]) == pytest.approx(0.8701 - 0.6125)


# --- the radar -------------------------------------------------------------------------------


def test_radar_written(fam_report):
    assert (fam_report / "fam_radar.png").read_bytes()[:8] == PNG_MAGIC
    svg = (fam_report / "fam_radar.svg").read_text()
    assert ET.fromstring(svg.encode()).tag == "{http://www.w3.org/2000/svg}svg"
    assert "<dc:date>" not in svg
    for label in ("Hypertension", "GERD", "CKD", "Gout", "CoT+KI (text+image)", "reference"):
        assert label in svg, label


def test_radar_is_deterministic(tmp_path, fam_report):
    build_report(fam_runs(tmp_path / "runs"), tmp_path / "out")
    for name in ("fam_radar.svg", "fam_radar.png", "fam_table1.tex", "fam_modality.csv"):
        assert (tmp_path / "out" / name).read_bytes() == (fam_report / name).read_bytes(), name


def test_no_radar_without_condition_breakdown(tmp_path):
    build_report([text_run(tmp_path / "run", with_conditions=False)], tmp_path / "out")
    names = {p.name for p in (tmp_path / "out").iterdir()}
    # the modes answer the same items: compared
    assert names == {"fam_table1.md", "fam_table1.csv", "fam_table1.tex", "report.html",
                     "comparison.md", "comparison.csv", "comparison.png", "comparison.svg"}


# --- whole reports ---------------------------------------------------------------------------


def test_fam_only_files(fam_report):
    names = {p.name for p in fam_report.iterdir()}
    assert names == {"fam_table1.md", "fam_table1.csv", "fam_table1.tex", "fam_modality.md",
                     "fam_modality.csv", "fam_modality.tex", "fam_radar.png", "fam_radar.svg",
                     "report.html", "comparison.md", "comparison.csv", "comparison.png",
                     "comparison.svg"}


def test_fam_only_html(fam_report):
    html = (fam_report / "report.html").read_text()
    assert '<section id="fam-section">' in html
    assert '<table id="fam_table1"' in html and '<table id="fam_modality"' in html
    assert "<td class=\"num\">77.53</td>" in html and "<td class=\"num\">+25.76</td>" in html
    assert "FAM-Bench Task 1 decision accuracy per condition" in html
    assert html.count("<svg") == 2  # the radar and the comparison's forest plot, inline
    assert "table3" not in html and "efficiency-section" not in html
    assert "No scored groups" not in html
    assert not re.search(r">\s*(?:nan|None|NaN)\s*<", html)
    # The samples are JSON rendered by the page's script, not server-side rows.
    samples = page_samples(fam_report / "report.html")
    assert len(samples) == 10
    assert "FAM Task 1 (dish)" in html and "FAM Task 2 (ranking)" in html
    assert '<option value=""></option>' not in html  # FAM's empty level is no filter value
    assert {"correct", "incorrect"} <= {s["outcome"] for s in samples}


def test_no_remote_resources(fam_report):
    html = (fam_report / "report.html").read_text()
    targets = re.findall(r"""\b(?:src|href)\s*=\s*["']?\s*([^"'\s>]*)""", html, re.I)
    assert [t for t in targets if re.match(r"(?:[a-z][a-z0-9+.-]*:)?//", t, re.I)] == []
    assert "<link" not in html and "@import" not in html
    assert re.findall(r"url\(\s*['\"]?(?!#)", html) == []
    assert "default-src 'none'" in html


def test_mixed_ngqa_and_fam(tmp_path):
    runs = [write_run(tmp_path / "runs" / "ngqa", "sparse"), *fam_runs(tmp_path / "runs")]
    page = build_report(runs, tmp_path / "out")
    out = tmp_path / "out"
    names = {p.name for p in out.iterdir()}
    assert {"table3.md", "table3.tex", "efficiency.md", "retrieval.md", "efficiency.svg",
            "retrieval.svg", "fam_table1.md", "fam_modality.md", "fam_radar.svg"} <= names
    table3_md = (out / "table3.md").read_text()
    assert "fam-" not in table3_md and "fam_" not in table3_md
    assert [line.split("|")[2].strip() for line in table3_md.splitlines()[2:]] == [
        "plain", "tog_kg"]
    assert "fam-" not in (out / "efficiency.md").read_text()
    assert "fam-" not in (out / "retrieval.csv").read_text()
    assert "| scripted/test | CoT+KI (image) | 61.25 |" in (out / "fam_table1.md").read_text()
    html = page.read_text()
    assert html.index('id="table3-section"') < html.index('id="fam-section"')
    assert html.count("<svg") == 4  # efficiency, retrieval, radar, forest plot
    assert len(page_samples(page)) == 12 + 10  # samples as JSON


def test_ngqa_only_report_unchanged(tmp_path):
    runs = write_runs(tmp_path / "runs")
    build_report(runs, tmp_path / "out")
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == {
        "table3.md", "table3.csv", "table3.tex", "efficiency.md", "efficiency.csv",
        "efficiency.png", "efficiency.svg", "retrieval.md", "retrieval.csv", "retrieval.png",
        "retrieval.svg", "report.html", "comparison.md", "comparison.csv", "comparison.png",
        "comparison.svg"}
    frame = groups_frame([read_json(run / "metrics.json") for run in runs])
    assert (out / "table3.md").read_text() == to_markdown(table3(frame))
    assert fam_table1(frame) is None and fam_modality(frame) is None
    html = (out / "report.html").read_text()
    assert "fam-section" not in html and "FAM" not in html
