"""A build folder is recognised for any registered benchmark: by the artifact its manifest
names, else by the task files it holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.interop.hf import build_kind
from nutrireason.schema import get_benchmark


def folder(root: Path, manifest: dict, files: list[str]) -> Path:
    root.mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("", encoding="utf-8")
    return root


def test_the_manifest_names_the_benchmark(tmp_path):
    assert build_kind(folder(tmp_path / "a", {"artifact": "ngqa"}, [])) == "ngqa"


def test_without_an_artifact_the_task_files_name_it(tmp_path):
    spec = get_benchmark("fam")
    rank = spec.file(Path(""), spec.tasks[-1].name).as_posix()
    assert build_kind(folder(tmp_path / "b", {"generator": "x"}, [rank])) == "fam"
    ngqa = get_benchmark("ngqa")
    level_file = ngqa.file(Path(""), ngqa.tasks[0].name, ngqa.levels[-1]).as_posix()
    assert build_kind(folder(tmp_path / "c", {}, [level_file])) == "ngqa"


def test_a_folder_of_no_benchmark_is_refused_naming_them(tmp_path):
    with pytest.raises(DataError, match="not a build of one benchmark \\(NGQA or FAM-Bench"):
        build_kind(folder(tmp_path / "d", {"artifact": "recipes"}, ["recipes.jsonl"]))
    with pytest.raises(DataError, match="no manifest.json"):
        build_kind(tmp_path)


def test_lm_eval_takes_any_benchmark_s_build_by_name(tmp_path):
    from nutrireason.interop import LmEvalExport

    request = LmEvalExport(out=tmp_path, build=["fam=/builds/fam"], ngqa_build=Path("/n"))
    assert request.builds() == {"fam": Path("/builds/fam"), "ngqa": Path("/n")}
    for bad in ("fam", "nope=/x", "fam="):
        with pytest.raises(DataError, match="--build"):
            LmEvalExport(out=tmp_path, build=[bad]).builds()
