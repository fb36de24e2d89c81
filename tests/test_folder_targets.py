"""Every command that writes a folder refuses a file, or a folder holding files it did not
write, unless told --overwrite; nothing is written then (through the CLI, as a user meets it).

The folder-replacing writers (merge, export hf, export lm-eval, review export) go through
``io.write_folder``; the writers that add files to a folder (a build stage's --out, a run's
--out, a report's --out) check it the same way before the first byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from tests.recipes.test_bad_inputs import corpus, record

runner = CliRunner()


def flat(result) -> str:
    return " ".join(result.output.split())


def someone_elses(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "thesis.tex").write_text("three years of work", encoding="utf-8")
    return folder


def untouched(folder: Path) -> bool:
    return [p.name for p in folder.iterdir()] == ["thesis.tex"] and \
        (folder / "thesis.tex").read_text(encoding="utf-8") == "three years of work"


def items(tmp_path: Path, n: int = 6) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "prompt": f"question {i}"}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def run_cli(bench: Path, out: Path, *extra: str):
    return runner.invoke(app, ["run", str(bench), "--out", str(out), "--model", "scripted/echo",
                               "--no-progress", "--no-cache", *extra])


def shard_pieces(tmp_path: Path) -> list[str]:
    """The two shard folders of one finished run of ``items``."""
    bench = items(tmp_path)
    pieces = []
    for k in (1, 2):
        out = tmp_path / f"shard-{k}"
        assert run_cli(bench, out, "--shard", f"{k}/2").exit_code == 0
        pieces.append(str(out))
    return pieces


def test_run_refuses_a_folder_of_other_files_and_resumes_its_own(tmp_path):
    bench = items(tmp_path)
    taken = someone_elses(tmp_path / "taken")
    result = run_cli(bench, taken)
    assert result.exit_code == 1 and "already holds files" in flat(result), result.output
    assert untouched(taken)
    out = tmp_path / "run"
    assert run_cli(bench, out, "--limit", "3").exit_code == 0
    resumed = run_cli(bench, out)
    assert resumed.exit_code == 0, resumed.output
    assert len((out / "records.jsonl").read_text().splitlines()) == 6


def test_a_file_in_the_way_is_refused(tmp_path):
    bench = items(tmp_path)
    target = tmp_path / "notes.txt"
    target.write_text("mine", encoding="utf-8")
    result = run_cli(bench, target)
    assert result.exit_code == 1 and "is a file, not a folder" in flat(result)
    assert target.read_text(encoding="utf-8") == "mine"


def test_merge_refuses_a_full_folder_and_replaces_it_with_overwrite(tmp_path):
    pieces = shard_pieces(tmp_path)
    taken = someone_elses(tmp_path / "merged")
    result = runner.invoke(app, ["merge", *pieces, "--out", str(taken)])
    assert result.exit_code == 1 and "already holds files" in flat(result)
    assert "--overwrite" in flat(result) and untouched(taken)
    result = runner.invoke(app, ["merge", *pieces, "--out", str(taken), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in taken.iterdir()) == ["manifest.json", "records.jsonl"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_report_refuses_a_full_folder_rewrites_its_own_and_obeys_overwrite(tmp_path):
    bench = items(tmp_path)
    run = tmp_path / "run"
    assert run_cli(bench, run).exit_code == 0
    assert runner.invoke(app, ["score", str(run), "--bootstrap", "0"]).exit_code == 0
    taken = someone_elses(tmp_path / "taken")
    result = runner.invoke(app, ["report", str(run), "--out", str(taken)])
    assert result.exit_code == 1 and "already holds files" in flat(result) and untouched(taken)
    report = tmp_path / "report"
    for _ in range(2):  # an earlier report is this command's own: written again
        result = runner.invoke(app, ["report", str(run), "--out", str(report)])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(run), "--out", str(taken), "--overwrite"])
    assert result.exit_code == 0, result.output
    assert (taken / "report.html").is_file() and (taken / "thesis.tex").is_file()


@pytest.mark.usefixtures("sr28")
def test_a_build_stage_refuses_an_out_folder_of_other_files(tmp_path):
    path = corpus(tmp_path, record("soup", ["2 cups water", "1 onion", "1 carrot"]))
    taken = someone_elses(tmp_path / "taken")
    command = ["recipes", "build", "--recipes", str(path), "--workers", "1", "--out", str(taken)]
    result = runner.invoke(app, command)
    assert result.exit_code == 1 and "already holds files" in flat(result) and untouched(taken)
    result = runner.invoke(app, [*command, "--overwrite"])
    assert result.exit_code == 0, result.output
    assert (taken / "recipes.jsonl").is_file() and (taken / "thesis.tex").is_file()
    again = runner.invoke(app, command)  # now an earlier build of the stage: no --overwrite
    assert again.exit_code == 0, again.output
