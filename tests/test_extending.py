"""The README's "Extending" examples run: a new NGQA method and a new backend are one file each
(``examples/extending/``), registered by decorator and used through the run engine."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from nutrireason.methods import get_method
from nutrireason.models import get_backend
from nutrireason.runs import RunConfig, run
from nutrireason.schema import read_records

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "extending"


def load_example(name: str) -> None:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def write_items(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


QUESTION = ('Based on the nutrients the food provides and the user needs, please answer whether '
            'the food "Lentil soup" is healthy for the user? Please answer with yes or no.')
NGQA_ITEM = {"id": "q1", "task": "binary", "level": "sparse", "question": QUESTION,
             "food": "Lentil soup", "user_id": "J:1", "food_id": "recipe:lentil-soup",
             "answer": "Yes", "conditions": ["hypertension"], "diets": [], "signal": [],
             "triples": [["user", "has", "hypertension"],
                         ["Lentil soup", "belongs to", "low_sodium"]],
             "edges": [], "nodes": []}


def test_a_new_method_is_one_file_registered_by_decorator(tmp_path):
    load_example("question_only")
    method = get_method("question-only")
    assert method.name == "question-only"
    bench = write_items(tmp_path / "items.jsonl", [NGQA_ITEM])
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["question-only"],
                            models=["scripted/yes"], cache=False, progress=False))
    assert (summary.ok, summary.errors) == (1, 0)
    (record,) = read_records(tmp_path / "run")
    assert (record.parsed, record.gold, record.retrieved) == ("Yes", "Yes", [])
    sent = record.requests[0]["messages"][-1]["content"]
    assert QUESTION in sent and "low_sodium" not in sent  # the graph is left out


def test_a_new_backend_is_one_file_registered_by_decorator(tmp_path):
    load_example("replay_backend")
    answers = write_items(tmp_path / "answers.jsonl",
                          [{"prompt": "Is lentil soup low in sodium?", "response": "Yes"}])
    backend = get_backend(f"replay/{answers}")
    assert backend.name == f"replay/{answers}"
    bench = write_items(tmp_path / "items.jsonl", [
        {"id": "a", "prompt": "Is lentil soup low in sodium?", "gold": "Yes"},
        {"id": "b", "prompt": "Never recorded", "gold": "No"}])
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["prompt"],
                            models=[f"replay/{answers}"], cache=False, progress=False))
    assert (summary.ok, summary.errors) == (1, 1)
    got = {r.item_id: r for r in read_records(tmp_path / "run")}
    assert got["a"].parsed == "Yes" and got["a"].status == "ok"
    assert got["b"].status == "error" and got["b"].error["kind"] == "bad_request"


def test_an_unknown_provider_lists_the_registered_ones():
    from nutrireason.errors import NutriReasonError

    with pytest.raises(NutriReasonError, match="registered providers: openai"):
        get_backend("nosuch/model")
