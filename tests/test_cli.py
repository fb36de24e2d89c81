"""The command line: every command answers --help; errors are one line and leave nothing behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.standards import load_bundles

EXPECTED_COMMANDS = {
    (),
    ("data",),
    ("data", "pull"),
    ("data", "status"),
    ("ngqa",),
    ("ngqa", "users"),
    ("standards",),
    ("standards", "check"),
    ("demo",),
    ("run",),
    ("merge",),
    ("recipes",),
    ("recipes", "build"),
    ("ngqa", "build"),
    ("ngqa", "stats"),
    ("score",),
    ("fam",),
    ("fam", "annotate"),
    ("fam", "build"),
    ("fam", "propose"),
    ("fam", "stats"),
    ("report",),
    ("compare",),
    ("power",),
    ("export",),
    ("export", "hf"),
    ("export", "lm-eval"),
    ("export", "graphml"),
    ("review",),
    ("review", "serve"),
    ("review", "export"),
    ("review", "stats"),
    ("review", "add-reviewer"),
    ("human",),
    ("human", "serve"),
}


def command_paths(command=None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand of the typer app, as argument tuples."""
    command = command if command is not None else typer.main.get_command(app)
    paths = [prefix]
    for name, sub in getattr(command, "commands", {}).items():
        paths.extend(command_paths(sub, (*prefix, name)))
    return paths


ALL_PATHS = command_paths()


@pytest.fixture
def runner() -> CliRunner:
    # Help is rendered at a fixed, wide width: narrow terminals cut option names ("--he…").
    return CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def empty_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("NUTRIREASON_HOME", str(home))
    return home


def everything_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def declared_builds() -> set[tuple[str, ...]]:
    """The ``<benchmark> build`` commands of benchmark packages (a stage declaring a
    registered benchmark that the built-in command groups do not cover)."""
    from nutrireason.cli import GROUPS
    from nutrireason.pipeline.stage import build_order

    names = {cls.benchmark for cls in build_order() if cls.benchmark} - set(GROUPS)
    return {path for name in names for path in ((name,), (name, "build"))}


def test_the_walk_finds_every_command():
    assert set(ALL_PATHS) == EXPECTED_COMMANDS | declared_builds()


@pytest.mark.parametrize("path", ALL_PATHS, ids=lambda p: " ".join(p) or "nutrireason")
def test_help(runner, path):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout
    assert "--help" in result.stdout
    assert result.exception is None


def test_help_lists_the_subcommands(runner):
    top = runner.invoke(app, ["--help"]).stdout
    for name in ("data", "ngqa", "standards", "demo"):
        assert name in top
    data = runner.invoke(app, ["data", "--help"]).stdout
    assert "pull" in data and "status" in data


def test_console_script_help():
    script = Path(sys.executable).with_name("nutrireason")
    if not script.is_file():
        pytest.skip("console script not installed next to this interpreter")
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout


def status_rows(output: str) -> dict[str, list[str]]:
    """Rows of the rich status table, keyed by bundle id (first cell)."""
    rows = {}
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if cells[0]:
            rows[cells[0]] = cells
    return rows


def test_data_status_on_an_empty_home(runner, empty_home, monkeypatch):
    # the table is parsed cell by cell: give it room, whatever the terminal's width
    from rich.console import Console

    import nutrireason.pipeline.show as show

    monkeypatch.setattr(show, "console", Console(width=200))
    result = runner.invoke(app, ["data", "status"])
    assert result.exit_code == 0, result.output
    assert f"data home: {empty_home}" in result.stdout.replace("\n", "")
    rows = status_rows(result.stdout)
    ids = [b.id for b in load_bundles()]
    assert list(rows) == ids
    for bundle_id in ids:
        present, files, megabytes = rows[bundle_id][2:5]
        assert (present, files, megabytes) == ("no", "0", "0.0"), bundle_id
    assert everything_under(empty_home) == []  # status only looks


def test_data_pull_unknown_bundle(runner, empty_home):
    result = runner.invoke(app, ["data", "pull", "--only", "no-such-bundle"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error:")
    assert "unknown bundle 'no-such-bundle'" in lines[0]
    assert everything_under(empty_home) == []


def test_ngqa_users_with_a_missing_nhanes_dir(runner, empty_home, tmp_path):
    missing = tmp_path / "no-such-nhanes"
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "u.parquet"
    result = runner.invoke(
        app, ["ngqa", "users", "--nhanes-dir", str(missing), "--out", str(out)]
    )
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    assert str(missing) in lines[0]
    assert not out.exists()
    assert everything_under(out_dir) == []  # no temp or manifest files either
    assert everything_under(empty_home) == []


def test_ngqa_users_without_bundles_says_to_pull(runner, empty_home):
    result = runner.invoke(app, ["ngqa", "users"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    assert "nutrireason data pull" in lines[0]
    assert "nhanes" in lines[0]
    assert not (empty_home / "builds").exists()


def test_ngqa_build_without_inputs_says_what_to_run_first(tmp_path, monkeypatch):
    monkeypatch.setenv("NUTRIREASON_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["ngqa", "build"])
    assert result.exit_code == 1
    assert "error:" in result.stderr and "nutrireason recipes build" in result.stderr
    assert not (tmp_path / "builds" / "ngqa").exists()
