"""The report is generic over registered benchmarks: each benchmark adds its own section
(its spec's ``report``), the report package names no benchmark, and importing it does not
load the run engine, the methods or the models."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nutrireason.schema as schema
from nutrireason.report import build_report
from nutrireason.schema import BenchmarkSpec, Record, TaskSpec, benchmark_names, get_benchmark
from tests.report import write_sample_scores
from tests.report.toy_section import TOY_TASK

SRC = Path(__file__).resolve().parents[2] / "src" / "nutrireason"


@pytest.fixture
def toy_benchmark():
    """A third benchmark registered for one test, with a report section from tests/; the
    registry is restored afterwards."""
    benchmark_names()  # the built-in ones load first, so that they are restored too
    saved = (dict(schema._FACTORIES), dict(schema._SPECS))

    @schema.register_benchmark("toy")
    def toy_spec() -> BenchmarkSpec:
        return BenchmarkSpec(
            name="toy", title="Toy", build_dir="toy",
            tasks=(TaskSpec(name=TOY_TASK, option="toy", label="Toy yes/no",
                            file="toy.jsonl", answer="yes_no"),),
            meta_keys=("task",), report="tests.report.toy_section:report_section")

    yield toy_spec
    for target, old in zip((schema._FACTORIES, schema._SPECS), saved, strict=True):
        target.clear()
        target.update(old)
    schema._TASK_OWNER.clear()
    schema._META_KEYS.clear()


def toy_run(run_dir: Path) -> Path:
    """A scored run of the toy task: two answers, one right."""
    run_dir.mkdir(parents=True)
    records = [Record(key=f"k{i}", item_id=f"toy-{i}", method="plain", model="scripted/yes",
                      status="ok", parsed="Yes", parse_ok=True, gold=gold,
                      responses=["Yes"], meta={"task": TOY_TASK})
               for i, gold in enumerate(("Yes", "No"))]
    (run_dir / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records),
                                           encoding="utf-8")
    write_sample_scores(run_dir, records)
    group = {"method": "plain", "model": "scripted/yes", "task": TOY_TASK, "level": "",
             "n": 2, "errors": 0, "metrics": {"accuracy": {"value": 0.5, "low": 0.0,
                                                           "high": 1.0}}}
    (run_dir / "metrics.json").write_text(json.dumps({"run": run_dir.name, "records": 2,
                                                      "groups": [group]}), encoding="utf-8")
    return run_dir


def test_a_registered_benchmark_adds_its_section(tmp_path, toy_benchmark):
    assert "toy" in benchmark_names()
    page = build_report([toy_run(tmp_path / "run")], tmp_path / "report")
    html = page.read_text(encoding="utf-8")
    assert '<section id="toy-section">' in html and '<table id="toy_table"' in html
    assert "0.5000" in html
    assert (tmp_path / "report" / "toy_table.md").read_text(encoding="utf-8").splitlines()[2] \
        == "| plain | scripted/yes | 0.5000 |"
    assert (tmp_path / "report" / "toy_table.tex").is_file()  # marked LaTeX by the section
    # the built-in benchmarks have no groups in this run: no section, no table of theirs
    assert not (tmp_path / "report" / "table3.md").exists()
    assert not (tmp_path / "report" / "fam_table1.md").exists()
    # the sample browser labels the toy task from its spec
    assert '"toy_yes_no":"Toy yes/no"' in html


def test_a_benchmark_without_a_report_section_gets_none(tmp_path, toy_benchmark,
                                                        monkeypatch):
    spec = get_benchmark("toy")
    monkeypatch.setitem(schema._SPECS, "toy", BenchmarkSpec(
        **{**spec.__dict__, "report": ""}))
    page = build_report([toy_run(tmp_path / "run")], tmp_path / "report")
    assert "toy-section" not in page.read_text(encoding="utf-8")
    assert not (tmp_path / "report" / "toy_table.md").exists()


def test_a_section_that_cannot_be_loaded_is_named(tmp_path, toy_benchmark, monkeypatch):
    from nutrireason.errors import NutriReasonError

    spec = get_benchmark("toy")
    monkeypatch.setitem(schema._SPECS, "toy", BenchmarkSpec(
        **{**spec.__dict__, "report": "tests.report.toy_section:no_such_function"}))
    with pytest.raises(NutriReasonError, match="'toy'.*no_such_function"):
        build_report([toy_run(tmp_path / "run")], tmp_path / "report")


def benchmark_words() -> re.Pattern[str]:
    """Every registered benchmark's name and title, as whole words, any case."""
    words = {w for name in benchmark_names() for w in (name, get_benchmark(name).title)}
    return re.compile(r"\b(" + "|".join(map(re.escape, sorted(words))) + r")\b", re.I)


def test_the_report_package_names_no_benchmark():
    pattern = benchmark_words()
    found = [f"{path.relative_to(SRC)}:{number}: {line.strip()}"
             for folder in ("report", "display") for path in sorted((SRC / folder).rglob("*"))
             if path.suffix in (".py", ".j2")
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert not found, "benchmark names in the report:\n" + "\n".join(found)


def test_the_check_sees_a_benchmark_name():
    pattern = benchmark_words()
    assert pattern.search('frame[frame["task"].isin(FAM_TASKS)]') is None  # not a whole word
    assert pattern.search("NGQA Table 3") and pattern.search('get_benchmark("fam")')
    assert pattern.search("Expert review of FAM-Bench labels")


def test_importing_the_report_loads_no_engine():
    code = ("import sys, nutrireason.report, nutrireason.display.table; "
            "print(sorted(m for m in sys.modules if m.startswith('nutrireason.')))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code.replace(
        "print(", "import json; print(json.dumps(")[:-1] + "))"], capture_output=True,
        text=True, check=True).stdout)
    heavy = [m for m in loaded if m.split(".")[1] in ("methods", "models", "ngqa", "fam")
             or m == "nutrireason.runs.engine"]
    assert heavy == [], heavy


def test_the_sections_keep_the_built_in_order_whatever_was_imported_first():
    code = ("import nutrireason.fam.spec; from nutrireason.schema import benchmark_names; "
            "print(','.join(benchmark_names()))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert found.split(",")[:2] == ["ngqa", "fam"]  # other registered benchmarks after
