"""Settings declared once on the library's dataclasses become the commands' options: the
object a command hands to the library is the one its options make."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason import cli
from nutrireason.cli import app
from nutrireason.options import REQUIRED, command_parameters, setting
from nutrireason.pipeline.run_request import RunRequest
from nutrireason.pipeline.stages import FamAnnotateStage, NgqaStage


@dataclasses.dataclass
class Example:
    name: str = setting("A name.", REQUIRED, argument=True)
    count: int = setting("How many.", 3, "--how-many", min=1)
    flag: bool = setting("A switch.", False)
    callback: object = None  # not a setting: not an option


def test_only_settings_become_parameters_in_field_order():
    params = command_parameters(Example)
    assert [p.name for p in params] == ["name", "count", "flag"]
    assert params[0].default is inspect.Parameter.empty  # REQUIRED: no default
    assert [p.default for p in params[1:]] == [3, False]
    count_info = params[1].annotation.__metadata__[0]
    assert count_info.param_decls == ("--how-many",) or count_info.default == "--how-many"
    assert count_info.min == 1 and count_info.help == "How many."


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def captured(monkeypatch) -> list[object]:
    """What `ensure` (the stage commands' one library call) was handed."""
    seen: list[object] = []
    monkeypatch.setattr(cli, "ensure", lambda stage, *a, **k: seen.append(stage))
    return seen


def test_a_stage_command_hands_over_the_stage_its_options_make(runner, captured, tmp_path):
    result = runner.invoke(app, ["ngqa", "build", "--out", str(tmp_path), "--seed", "7",
                                 "--standard-rule", "loose", "--reviewed-only"])
    assert result.exit_code == 0, result.output
    assert captured == [NgqaStage(out=tmp_path, seed=7, standard_rule="loose",
                                  reviewed_only=True)]


def test_defaults_come_from_the_dataclass(runner, captured):
    assert runner.invoke(app, ["ngqa", "build"]).exit_code == 0
    assert captured == [NgqaStage()]


def test_an_option_name_other_than_the_field_reaches_the_field(runner, captured):
    result = runner.invoke(app, ["fam", "annotate", "--proposer", "scripted/yes",
                                 "--limit", "4"])
    assert result.exit_code == 0, result.output
    (stage,) = captured
    assert isinstance(stage, FamAnnotateStage)
    assert (stage.proposer_model, stage.limit, stage.concurrency) == ("scripted/yes", 4, 8)
    assert stage.log is not None  # the command sets what is not an option


@pytest.mark.parametrize("argv, wrong", [
    (["ngqa", "build", "--standard-rule", "medium"], "--standard-rule"),
    (["fam", "annotate", "--concurrency", "0"], "--concurrency"),
    (["run", "ngqa"], "--out"),  # a REQUIRED setting is a required option
])
def test_bad_values_are_refused_by_the_option(runner, captured, argv, wrong):
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert wrong in result.output
    assert captured == []


def test_a_library_error_in_the_options_object_is_one_line(runner, captured, tmp_path):
    result = runner.invoke(app, ["fam", "annotate", "--proposer", "scripted/yes",
                                 "--proposals", str(tmp_path)])
    assert result.exit_code == 1
    assert "not both" in result.output and "Traceback" not in result.output


def test_the_run_request_holds_every_run_option():
    options = {p.name for p in command_parameters(RunRequest)}
    request = RunRequest("ngqa", Path("out"))
    assert {f.name for f in dataclasses.fields(request)} == options
    assert request.generation().temperature == 0.0
    assert RunRequest("ngqa", Path("o"), gen=["temperature=0.5"],
                      temperature=0.9).generation().temperature == 0.5
