"""With ``check_items`` (what ``nutrireason run`` sets for a registered benchmark's build) the
engine holds an item that names a registered benchmark's task to that task's item model
(``TaskSpec.item_model``): an item that does not fit is an item-level error naming the field,
nothing is sent for it, and the run goes on. A JSONL file of one's own is not held to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.runs import run
from nutrireason.runs.policy import resolve_models
from nutrireason.schema import check_item
from tests.runs.test_engine import config, lines


def ngqa_item(item_id: str, **change) -> dict:
    """A binary NGQA question with every field its item model asks for (written by hand:
    one user with hypertension, one salty food, one contradict edge)."""
    item = {"id": item_id, "question_id": item_id, "level": "sparse", "task": "binary",
            "user_id": "u1", "food_id": "f1", "food": "salted crackers",
            "question": "Is salted crackers good for this user?", "answer": "No",
            "conditions": ["hypertension"], "diets": [], "signal": [],
            "triples": [["salted crackers", "has_tag", "high_sodium"],
                        ["hypertension", "contradict", "high_sodium"]],
            "nodes": [{"id": "f1"}], "edges": [{"source": "f1", "target": "t1"}]}
    return item | change


def write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def test_items_that_do_not_fit_their_task_are_item_errors(tmp_path):
    broken = ngqa_item("q1")
    del broken["triples"]
    items = [ngqa_item("q0"), broken, ngqa_item("q2", nodes="not a list"), ngqa_item("q3")]
    write(tmp_path / "items.jsonl", items)
    oracle = {"methods": ["oracle"], "models": resolve_models(["none"], ["oracle"])}
    summary = run(config(tmp_path, check_items=True, **oracle))
    assert (summary.ok, summary.errors) == (2, 2)
    records = {r["item_id"]: r for r in lines(tmp_path / "run")}
    assert records["q0"]["parsed"] == records["q0"]["gold"]
    missing, wrong_type = records["q1"]["error"], records["q2"]["error"]
    assert missing["kind"] == wrong_type["kind"] == "bad_item"
    assert "field 'triples'" in missing["message"] and "NGQA binary item" in missing["message"]
    assert missing["line"] == 2
    assert "field 'nodes'" in wrong_type["message"]
    assert records["q1"]["n_calls"] == records["q2"]["n_calls"] == 0


def test_without_the_check_only_what_the_method_reads_matters(tmp_path):
    write(tmp_path / "items.jsonl", [ngqa_item("q0", nodes="not a list", user_id=None)])
    oracle = {"methods": ["oracle"], "models": resolve_models(["none"], ["oracle"])}
    assert run(config(tmp_path, **oracle)).ok == 1


def test_run_checks_the_items_of_a_registered_benchmark_only(tmp_path):
    from nutrireason.pipeline.run_request import RunRequest, plan_run

    own = write(tmp_path / "own.jsonl", [{"id": "a", "prompt": "hi"}])
    assert not plan_run(RunRequest(str(own), tmp_path / "r", model=["scripted/echo"]),
                        progress=False).check_items
    build = tmp_path / "build"
    (build / "sparse").mkdir(parents=True)
    write(build / "sparse" / "binary.jsonl", [ngqa_item("q0")])
    request = RunRequest("ngqa", tmp_path / "r", level=["sparse"], benchmark_dir=build,
                         method=["oracle"], model=["none"])
    assert plan_run(request, progress=False).check_items


def test_items_without_a_registered_task_are_not_held_to_a_model():
    check_item({"id": "x", "prompt": "anything"})
    check_item({"id": "x", "task": "my_own_task", "prompt": "anything"})


@pytest.mark.parametrize("item, field", [
    ({"id": "d1", "task": "fam_dish", "condition": "gout"}, "conditions"),
    ({"id": "r1", "task": "fam_rank", "distractor": "hard", "conditions": ["gout"],
      "condition_labels": ["Gout"], "recipe_ids": {"A": "r"}, "dishes": {},
      "gold": {"ranking": "A"}}, None),
])
def test_fam_items_are_held_to_their_task(item, field):
    if field is None:
        check_item(item)  # every field a rank item needs is there
        return
    with pytest.raises(DataError, match=f"field '{field}'"):
        check_item(item)
