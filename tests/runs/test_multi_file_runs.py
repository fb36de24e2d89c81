"""One run over several item files: `run ngqa --task all --level all` and `run fam --task all
--mode all` in one folder, ids unique across files, offset/limit per file, resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.pipeline.run_request import benchmark_files, choices, mode_methods
from nutrireason.runs.benchmark import load_benchmark, load_benchmarks
from nutrireason.schema import read_records

LEVELS = ("sparse", "standard", "complex")
TASKS = {"binary": "Yes", "multi_label": ["low_carb"], "text_generation": "Yes, because."}


def ngqa_item(level: str, task: str, number: int) -> dict:
    food = f"Soup {level} {number}"
    return {"id": f"ngqa-{level}-{number:05d}-{task}", "question_id": f"ngqa-{level}-{number}",
            "level": level, "task": task, "food": food, "food_id": "f1", "user_id": "J:1",
            "question": f'Is "{food}" healthy for the user?', "conditions": ["diabetes"],
            "diets": [], "triples": [[food, "belongs to", "low_carb"], ["user", "has", "diabetes"],
                                     ["diabetes", "match", "low_carb"]],
            "nodes": [], "edges": [], "signal": [], "answer": TASKS[task]}


@pytest.fixture
def ngqa_dir(tmp_path) -> Path:
    """A tiny NGQA build: 3 items per (level, task) file, in the real layout."""
    root = tmp_path / "ngqa"
    for level in LEVELS:
        (root / level).mkdir(parents=True)
        for task in TASKS:
            lines = [json.dumps(ngqa_item(level, task, n)) for n in range(3)]
            (root / level / f"{task}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_choices_split_commas_expand_all_and_refuse_by_name():
    known = ["binary", "multilabel", "textgen"]
    assert choices(["binary,textgen", "binary"], known, "--task") == ["binary", "textgen"]
    assert choices(["all"], known, "--task") == known
    assert choices(["all"], [*known, "x"], "--mode", every=known) == known
    with pytest.raises(DataError, match="'bogus'"):
        choices(["binary,bogus"], known, "--task")


def test_benchmark_files_cover_every_task_and_level(ngqa_dir):
    files = benchmark_files("ngqa", ["all"], ["all"], ngqa_dir)
    assert [f"{p.parent.name}/{p.stem}" for p in files] == [
        f"{level}/{task}" for task in TASKS for level in LEVELS]
    # aliases and record names are accepted, and the default level is standard
    assert benchmark_files("ngqa", ["multi_label"], None, ngqa_dir) == [
        ngqa_dir / "standard" / "multi_label.jsonl"]
    with pytest.raises(DataError, match="has no levels"):
        benchmark_files("fam", ["dish"], ["standard"], ngqa_dir)


def test_fam_mode_all_is_the_papers_four():
    assert mode_methods("fam", ["all"], "text") == ["fam-baseline", "fam-cot", "fam-ki",
                                                    "fam-cot-ki"]


def test_several_files_form_one_benchmark(ngqa_dir, tmp_path):
    paths = [ngqa_dir / "sparse" / "binary.jsonl", ngqa_dir / "complex" / "binary.jsonl"]
    both = load_benchmarks(paths)
    assert len(both.items) == 6 and [f.count for f in both.files] == [3, 3]
    # offset and limit apply to each file
    assert [i["id"] for i in both.select(1, 1)] == ["ngqa-sparse-00001-binary",
                                                    "ngqa-complex-00001-binary"]
    located = both.located(0, 1)
    assert [(line, path) for line, _, path in located] == [(1, paths[0]), (1, paths[1])]
    # one file keeps its own sha256 as the fingerprint (old runs resume)
    assert load_benchmarks(paths[:1]).sha256 == load_benchmark(paths[0]).sha256
    # the fingerprint survives moving the build folder
    moved = tmp_path / "moved"
    ngqa_dir.rename(moved)
    again = load_benchmarks([moved / "sparse" / "binary.jsonl", moved / "complex" / "binary.jsonl"])
    assert again.sha256 == both.sha256


def test_an_id_repeated_across_files_is_refused_naming_both(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"id": "x1"}\n')
    second.write_text('{"id": "x2"}\n{"id": "x1"}\n')
    with pytest.raises(DataError) as error:
        load_benchmarks([first, second])
    assert "a.jsonl" in str(error.value) and "b.jsonl" in str(error.value)
    assert "x1" in str(error.value)


def test_run_every_task_and_level_in_one_folder_and_resume(ngqa_dir, tmp_path):
    out = tmp_path / "run"
    args = ["run", "ngqa", "--task", "all", "--level", "all", "--limit", "2",
            "--method", "plain", "--model", "scripted/yes", "--benchmark-dir", str(ngqa_dir),
            "--out", str(out), "--no-progress", "--no-cache"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    records = read_records(out / "records.jsonl")
    assert len(records) == 3 * 3 * 2
    assert {(r.task, r.level) for r in records} == {(t, lv) for t in TASKS for lv in LEVELS}
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["benchmark_files"]) == 9 and manifest["status"] == "complete"
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "18 already done" in " ".join(again.output.split())
    assert len(read_records(out / "records.jsonl")) == 18
    # another task list is another run: the folder refuses it
    other = CliRunner().invoke(app, [*args[:3], "binary", *args[4:]])
    assert other.exit_code != 0


def test_default_methods_come_from_the_declarations():
    from nutrireason.pipeline.run_request import default_methods

    assert default_methods("ngqa", None, "text") == ["plain"]  # the declared default
    assert default_methods("fam", None, "text") == ["fam-baseline"]  # the first mode
    assert default_methods("fam", ["reference"], "image") == ["fam-reference"]  # text only
    assert default_methods("items.jsonl", None, "text") == ["prompt"]
