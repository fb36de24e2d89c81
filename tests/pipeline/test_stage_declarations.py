"""Stages declare what they build on and where they write: the build order and the default
paths come from the declarations, and the code a stage fingerprints is every module its class
imports, followed through their imports, so a change in any of them rebuilds it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from nutrireason.errors import NutriReasonError
from nutrireason.paths import builds_dir
from nutrireason.pipeline import stage as stage_module
from nutrireason.pipeline.demo import demo_stages
from nutrireason.pipeline.stage import (
    STAGES,
    Stage,
    build_order,
    default_target,
    stage_files,
    stage_modules,
)
from nutrireason.pipeline.stages import FamAnnotateStage, FamBuildStage, NgqaStage, RecipesStage
from nutrireason.schema import get_benchmark


def test_the_build_order_comes_from_the_declarations():
    built_in = ["users", "recipes", "ngqa", "fam-annotate", "fam"]
    assert [cls.key for cls in build_order() if cls.key in built_in] == built_in
    assert [type(s).__name__ for s in demo_stages() if s.key in built_in] == [
        "UsersStage", "RecipesStage", "NgqaStage", "FamAnnotateStage", "FamBuildStage"]
    for cls in build_order():  # every stage comes after the stages it builds on
        keys = [c.key for c in build_order()]
        assert all(keys.index(up) < keys.index(cls.key) for up in cls.upstream), cls.key


def test_an_unknown_upstream_or_a_loop_is_refused(monkeypatch):
    monkeypatch.setattr(stage_module, "STAGES", {})
    first = type("First", (RecipesStage,), {"key": "first", "upstream": ("second",)})
    with pytest.raises(NutriReasonError, match="'first' builds on \\['second'\\]"):
        build_order()
    type("Second", (RecipesStage,), {"key": "second", "upstream": ("first",)})
    with pytest.raises(NutriReasonError, match="in a loop"):
        build_order()
    assert first.key in stage_module.STAGES


def test_default_paths_come_from_the_upstream_declarations():
    recipes = builds_dir() / STAGES["recipes"].default_target
    assert default_target("recipes") == recipes == RecipesStage().target
    assert NgqaStage().food_inputs() == [recipes / "foods.parquet",
                                         recipes / "food_ingredients.parquet"]
    assert NgqaStage().users_path() == default_target("users")
    assert FamAnnotateStage().folder == recipes
    assert FamBuildStage().pool == default_target("fam-annotate") / "annotations.jsonl"
    assert FamBuildStage().corpus == recipes / "recipes.jsonl"
    assert NgqaStage().target == builds_dir() / get_benchmark("ngqa").build_dir
    assert RecipesStage(out=Path("elsewhere")).target == Path("elsewhere")
    with pytest.raises(NutriReasonError, match="no stage declares the key 'nope'"):
        default_target("nope")


def test_the_code_a_stage_runs_is_derived_from_its_imports():
    modules = stage_modules(RecipesStage)
    assert "nutrireason.recipes.build" in modules
    assert not any("show" in name for name in modules)  # printing makes no output
    files = {p.relative_to(stage_module.PACKAGE_ROOT).as_posix()
             for p in stage_files(RecipesStage)}
    # followed through imports: the leaves no hand list named
    assert {"recipes/build.py", "recipes/words.py", "storage.py", "errors.py",
            "pipeline/stages.py"} <= files
    assert not any(f.startswith(("report/", "methods/")) for f in files)


class UnitsStage(Stage):
    """Writes one file; its build imports the line parser (which imports the rule loaders)."""

    name = label = "units"

    def __init__(self, source: Path, target: Path) -> None:
        self.source, self.target, self.builds = source, target, 0

    def inputs(self) -> list[Path]:
        return [self.source]

    def outputs(self) -> list[Path]:
        return [self.target / "out.txt"]

    def build(self) -> Any:
        from nutrireason.recipes.parse import convert  # noqa: F401 - what the build runs

        self.builds += 1
        self.target.mkdir(parents=True, exist_ok=True)
        (self.target / "out.txt").write_text(self.source.read_text(), encoding="utf-8")


def test_a_stage_whose_imported_module_changed_is_rebuilt(tmp_path, monkeypatch):
    root = tmp_path / "nutrireason"
    shutil.copytree(stage_module.PACKAGE_ROOT, root,
                    ignore=shutil.ignore_patterns("__pycache__", "data"))
    monkeypatch.setattr(stage_module, "PACKAGE_ROOT", root)
    source = tmp_path / "in.txt"
    source.write_text("x", encoding="utf-8")
    stage = UnitsStage(source, tmp_path / "out")
    assert [stage.ensure().status for _ in range(2)] == ["built", "up to date"]
    # a module the class does not import, nor anything it imports: still up to date
    with (root / "report" / "html.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# an unrelated change\n")
    assert stage.ensure().status == "up to date"
    # a module that the module the build imports imports: rebuilt
    with (root / "recipes" / "rules.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# a change two imports away\n")
    assert [stage.ensure().status for _ in range(2)] == ["built", "up to date"]
    assert stage.builds == 2


def test_evaluation_rescores_a_run_by_the_same_rule(tmp_path):
    """A run is scored again when its records' content changed, not when their file was
    touched; the stamp sits in the run folder."""
    import os

    from nutrireason.pipeline.evaluate import ScoreStage
    from tests.report import write_run

    run_dir = write_run(tmp_path / "run", "standard")
    scoring = ScoreStage(run_dir, bootstrap=0)
    assert [scoring.ensure().status for _ in range(2)] == ["built", "up to date"]
    records = run_dir / "records.jsonl"
    os.utime(records, (records.stat().st_atime, records.stat().st_mtime + 100))
    assert scoring.ensure().status == "up to date"  # newer, but the same records
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    records.write_text("".join(lines[:-1]), encoding="utf-8")
    assert scoring.ensure().status == "built"
    assert ScoreStage(run_dir, bootstrap=10).ensure().status == "built"  # another setting
    assert (run_dir / "score.stage.json").is_file()


def test_a_benchmark_package_s_stage_gets_its_build_command(tmp_path, monkeypatch):
    """A stage declaring a registered benchmark no command group covers becomes
    ``<benchmark> build``, its settings the options; it builds through ``ensure``."""
    from dataclasses import dataclass

    from typer.testing import CliRunner

    import nutrireason.schema as schema
    from nutrireason import cli
    from nutrireason.options import OUT, setting
    from nutrireason.schema import BenchmarkSpec, TaskSpec

    monkeypatch.setattr(stage_module, "STAGES", dict(STAGES))
    monkeypatch.setattr(cli.app, "registered_groups", list(cli.app.registered_groups))
    monkeypatch.setitem(schema._FACTORIES, "toybuild", lambda: BenchmarkSpec(
        name="toybuild", title="Toy", build_dir="toybuild",
        tasks=(TaskSpec(name="toy_task", option="toy", label="Toy", file="toy.jsonl",
                        answer="yes_no"),)))
    monkeypatch.setattr(schema, "_TASK_OWNER", {})

    @dataclass
    class ToyStage(Stage):
        """One file of toy items."""

        out: Path | None = setting(OUT)
        size: int = setting("Items to write.", 2, min=1)
        name = label = "toy"
        key = "toybuild"
        benchmark = "toybuild"

        def inputs(self) -> list[Path]:
            return []

        def outputs(self) -> list[Path]:
            return [self.target / "toy.jsonl"]

        def build(self) -> Any:
            self.target.mkdir(parents=True, exist_ok=True)
            (self.target / "toy.jsonl").write_text("{}\n" * self.size, encoding="utf-8")

    assert cli.declared_build_commands() == ["toybuild build"]
    runner = CliRunner()
    shown = runner.invoke(cli.app, ["toybuild", "build", "--help"])
    assert shown.exit_code == 0 and "--size" in shown.output and "Toy" in shown.output
    done = runner.invoke(cli.app, ["toybuild", "build", "--out", str(tmp_path / "b"),
                                   "--size", "3"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "b" / "toy.jsonl").read_text(encoding="utf-8") == "{}\n" * 3
    assert cli.declared_build_commands() == []  # covered now
