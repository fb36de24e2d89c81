"""The benchmark registry, method specs and the stage contract (build once, skip when up to
date, rebuild when an input, a setting or the code changes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nutrireason.errors import DataError
from nutrireason.methods import get_method
from nutrireason.pipeline.stage import Stage
from nutrireason.schema import MethodSpec, get_benchmark, spec_for_task


def test_the_registered_benchmarks_name_their_tasks_levels_and_files(tmp_path):
    ngqa = get_benchmark("ngqa")
    assert ngqa.levels == ("sparse", "standard", "complex")
    assert [t.option for t in ngqa.tasks] == ["binary", "multilabel", "textgen"]
    assert ngqa.file(tmp_path, "multilabel", "complex") == tmp_path / "complex/multi_label.jsonl"
    assert len(ngqa.labels) == 14 and ngqa.labels[:2] == ("low_carb", "high_carb")
    fam = get_benchmark("fam")
    assert fam.file(tmp_path, "rank") == tmp_path / "rank.jsonl"
    assert len(fam.labels) == 13
    assert spec_for_task("fam_dish")[1].option == "dish"
    assert spec_for_task("no_such_task") is None
    with pytest.raises(DataError, match="level"):
        ngqa.file(tmp_path, "binary", "hard")
    with pytest.raises(DataError, match="dish, rank"):
        fam.task("binary")
    with pytest.raises(DataError, match="unknown benchmark"):
        get_benchmark("mmlu")


@pytest.mark.parametrize(("text", "name", "params", "label"), [
    ("plain", "plain", {}, "plain"),
    ("tog:width=3,depth=2", "tog", {"width": 3, "depth": 2}, "tog:depth=2,width=3"),
    ("kaping: top_k = 5 ", "kaping", {"top_k": 5}, "kaping:top_k=5"),
    ("x:flag=true,mode=fast", "x", {"flag": True, "mode": "fast"}, "x:flag=true,mode=fast"),
])
def test_method_specs_read_typed_parameters(text, name, params, label):
    spec = MethodSpec.parse(text)
    assert (spec.name, spec.params, spec.label) == (name, params, label)


@pytest.mark.parametrize("bad", ["", ":width=3", "tog:width", "tog:=3"])
def test_a_malformed_method_spec_is_refused_naming_the_option(bad):
    with pytest.raises(DataError, match="--method"):
        MethodSpec.parse(bad)


def test_method_parameters_reach_the_method_and_its_name():
    tog = get_method("tog:width=2,depth=1")
    assert (tog.width, tog.depth, tog.name) == (2, 1, "tog:depth=1,width=2")
    assert get_method("tog").name == "tog"
    with pytest.raises(DataError, match="does not take"):
        get_method("plain:top_k=3")
    with pytest.raises(DataError, match="width >= 1"):
        get_method("tog:width=0")


class CopyStage(Stage):
    """Copies one file upper-cased; counts its builds."""

    name = label = "copy"
    generator = "copy/1"
    code = ("schema",)

    def __init__(self, source: Path, target: Path, suffix: str = "") -> None:
        self.source, self.target, self.suffix, self.builds = source, target, suffix, 0

    def inputs(self) -> list[Path]:
        return [self.source]

    def settings(self) -> dict[str, Any]:
        return {"suffix": self.suffix}

    def outputs(self) -> list[Path]:
        return [self.target / "out.txt"]

    @property
    def stamp_path(self) -> Path:
        return self.target / "stage.json"

    def build(self) -> str:
        self.builds += 1
        self.target.mkdir(exist_ok=True)
        text = self.source.read_text().upper() + self.suffix
        (self.target / "out.txt").write_text(text)
        return text


def test_a_stage_builds_once_then_only_when_an_input_setting_or_output_changes(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a")
    stage = CopyStage(source, tmp_path / "out")
    assert stage.ensure().built and stage.builds == 1
    assert not stage.ensure().built and stage.builds == 1
    source.write_text("b")  # an input changed
    assert stage.ensure().value == "B"
    stage.suffix = "!"  # a setting changed
    assert stage.ensure().value == "B!"
    (tmp_path / "out" / "out.txt").unlink()  # an output went missing
    assert stage.ensure().built and stage.builds == 4
    assert stage.ensure(force=True).built and stage.builds == 5


def test_a_stage_that_dies_stays_out_of_date(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a")
    stage = CopyStage(source, tmp_path / "out")
    stage.ensure()
    source.write_text("c")

    def fail() -> str:
        raise RuntimeError("killed")

    stage.build = fail  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        stage.ensure()
    assert not stage.up_to_date()


def test_records_carry_the_method_spec_and_what_the_method_reports_in_extra(tmp_path):
    import json

    from nutrireason.runs import RunConfig, run
    from nutrireason.schema import read_records

    item = {"id": "q1", "task": "binary", "level": "sparse", "food": "Lentil soup",
            "question": "Is it healthy?", "answer": "Yes", "user_id": "u", "food_id": "f",
            "triples": [["user", "has", "hypertension"], ["Lentil soup", "belongs to",
                                                          "low_sodium"]],
            "edges": [], "nodes": [], "signal": [], "conditions": [], "diets": []}
    bench = tmp_path / "items.jsonl"
    bench.write_text(json.dumps(item) + "\n")
    run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["tog:width=1,depth=1"],
                  models=["scripted/yes"], cache=False, progress=False))
    (record,) = read_records(tmp_path / "run")
    assert record.method == "tog:depth=1,width=1"
    assert record.method_spec == {"name": "tog", "params": {"width": 1, "depth": 1}}
    assert set(record.extra) >= {"tog_pruning_calls"}
    assert "tog_pruning_calls" not in record.model_dump(exclude={"extra"})
    assert record.meta == {k: item[k] for k in ("level", "task", "user_id", "food_id", "food",
                                                "question", "signal", "conditions", "diets")}
