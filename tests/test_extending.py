"""The examples of docs/guides/extending.md run: a new NGQA method, a new backend and a new
FAM-Bench condition are one file each (``examples/extending/``); the method and backend register by
decorator and run through the engine, the condition is read from the data home."""

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


def test_a_new_fam_condition_is_one_file(tmp_path, monkeypatch, recipe_build, sr28):
    """``examples/extending/lactose_intolerance.yaml`` dropped into the data home's
    ``standards/fam_kb/``: the knowledge base, the annotation pool and the benchmark spec all
    hold it after the paper's 13, with its own Rec/NotRec entries."""
    import shutil

    import nutrireason.schema as schema
    from nutrireason.fam.kb import CONDITION_IDS, load_kb
    from nutrireason.fam.pool import build_pool, read_recipes

    home = tmp_path / "home"
    (home / "standards" / "fam_kb").mkdir(parents=True)
    shutil.copy(EXAMPLES / "lactose_intolerance.yaml", home / "standards" / "fam_kb")
    monkeypatch.setenv("NUTRIREASON_HOME", str(home))
    kb = load_kb()
    assert list(kb) == [*CONDITION_IDS, "lactose_intolerance"]
    corpus = [r for r in read_recipes(recipe_build / "recipes.jsonl") if r.get("kept")]
    with_milk = [r for r in corpus
                 if any(" milk" in f" {line}".lower() for line in r["record"]["ingredients"])]
    summary = build_pool(with_milk[:40], sr28, tmp_path / "pool")
    rows = {row["condition"]: row for row in summary["conditions"]}
    assert "lactose_intolerance" in rows
    entries = [e for line in (tmp_path / "pool" / "annotations.jsonl").read_text().splitlines()
               for side in ("rec", "not_rec") for e in json.loads(line)[side]
               if e["condition"] == "lactose_intolerance"]
    assert entries  # recipes with milk get an entry for the new condition, with provenance
    assert any(p["concept"] == "lactose_containing_dairy" and p["kb_side"] == "limit"
               for e in entries for p in e["provenance"])
    assert all(e["condition"] == "lactose_intolerance" for e in entries)
    monkeypatch.setattr(schema, "_SPECS", {})  # the FAM spec reads the knowledge base anew
    assert schema.get_benchmark("fam").labels[-1] == "lactose_intolerance"
