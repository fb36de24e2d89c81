"""`nutrireason ngqa users` on raw XPT trees: success across cycles, and bad input that leaves
nothing behind."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.sources.nhanes import read_nhanes_dir
from tests.sources.nhanes_fixtures import write_tree, write_xpt


def run(*args: str):
    return CliRunner().invoke(app, ["ngqa", "users", *args])


def assert_nothing_written(folder: Path) -> None:
    assert not folder.exists() or list(folder.iterdir()) == []


def test_raw_tree_with_j_and_p_annotates_once_per_participant(tmp_path):
    root = tmp_path / "nhanes"
    write_tree(root, cycles=("C", "E", "J", "P"), layout="nested")
    out = tmp_path / "out" / "users.parquet"
    result = run("--nhanes-dir", str(root), "--prefer", "P", "--out", str(out))
    assert result.exit_code == 0, result.output
    users = pd.read_parquet(out)
    demo = read_nhanes_dir(root, prefer="P")["demographics"]
    adults = demo[demo["age_years"] >= 18]
    assert len(users) == len(adults) and users["seqn"].is_unique
    assert set(users["cycle"]) == {"C", "E", "P"}
    assert "Table 11" in result.stdout and f"{len(users):,} adults annotated" in result.stdout


def test_j_and_p_together_without_a_choice_fails_cleanly(tmp_path):
    root = tmp_path / "nhanes"
    write_tree(root, cycles=("J", "P"))
    out_dir = tmp_path / "out"
    result = run("--nhanes-dir", str(root), "--out", str(out_dir / "users.parquet"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error:") and "P" in result.stderr
    assert_nothing_written(out_dir)


@pytest.mark.parametrize("case", ["not_xpt", "missing_column", "unknown_cycle", "missing_demo"])
def test_bad_raw_input_names_the_file_and_writes_nothing(tmp_path, case):
    root = tmp_path / "nhanes"
    written = write_tree(root, cycles=("E",), drug_file=False)
    args = ["--nhanes-dir", str(root)]
    expected = ""
    if case == "not_xpt":
        written["DBQ_E"].write_text("SEQN,DBQ700\n1,3\n")
        expected = "DBQ_E"
    elif case == "missing_column":
        write_xpt(written["DEMO_E"], pd.DataFrame({"SEQN": [1.0], "RIAGENDR": [1.0]}))
        expected = "RIDAGEYR"
    elif case == "unknown_cycle":
        args += ["--cycles", "K"]
        expected = "K"
    else:
        written["DEMO_E"].unlink()
        expected = "DEMO"
    out_dir = tmp_path / "out"
    result = run(*args, "--out", str(out_dir / "users.parquet"))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error:") and expected in result.stderr
    assert_nothing_written(out_dir)
