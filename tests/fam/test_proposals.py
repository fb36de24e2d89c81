"""The LLM proposal step on its own: parsing, the cross-check without a corrective pass (a
recipe whose rules and proposal disagree on any condition's side is dropped), and `fam propose`
+ `fam annotate --proposals` end to end through the run engine with a scripted model (the full
loop with the corrective pass is in test_annotation_loop.py)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import load_kb
from nutrireason.fam.proposals import (
    DISAGREE,
    NO_PROPOSAL,
    NOT_PROPOSED,
    condition_names,
    cross_check,
    disagreements,
)
from nutrireason.methods.fam_prompts import parse_proposal
from nutrireason.models.scripted import register

NAMES = condition_names(load_kb())


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Responses cached per test, never in the user's data home."""
    monkeypatch.setattr("nutrireason.models.cache.default_cache_path",
                        lambda: tmp_path / "cache" / "responses.sqlite")


def test_condition_names_cover_ids_labels_and_abbreviations():
    assert NAMES["ibs"] == NAMES["irritable bowel syndrome"] == "ibs"
    assert NAMES["chronic kidney disease"] == "chronic_kidney_disease"
    assert NAMES["chronic kidney disease"] == NAMES["chronic_kidney_disease".replace("_", " ")]
    assert NAMES["nafld"] == "nafld" and NAMES["obesity"] == "obesity"


def test_parse_proposal_maps_names_and_sides():
    text = json.dumps({"annotations": [
        {"condition": "Hypertension", "decision": "not recommend", "ingredients": ["salt"]},
        {"condition": "IBS", "decision": "neutral", "ingredients": []},
        {"condition": "Chronic Kidney Disease", "decision": "recommend",
         "ingredients": ["apple"]},
        {"condition": "hypertension", "decision": "recommend"},  # repeat: first one wins
        {"condition": "Scurvy", "decision": "recommend"},  # not a condition here
        {"condition": "Gout", "decision": "maybe"},  # not a side
    ]})
    parsed, mode = parse_proposal(f"Here you go:\n```json\n{text}\n```", NAMES)
    assert mode == "json"
    assert parsed["sides"] == {"hypertension": NOT_REC, "ibs": "neutral",
                               "chronic_kidney_disease": REC}
    assert parsed["ingredients"]["hypertension"] == ["salt"]
    assert parse_proposal("I cannot say.", NAMES) == ({"sides": {}, "ingredients": {}},
                                                      "failed")


def _annotation(rid, rec=(), not_rec=(), excluded=None):
    entry = lambda c: {"condition": c, "ingredients": ["x"], "provenance": []}  # noqa: E731
    return {"recipe_id": rid, "title": rid, "excluded": excluded,
            "rec": [entry(c) for c in rec], "not_rec": [entry(c) for c in not_rec],
            "excluded_entries": []}


def test_cross_check_drops_disagreeing_and_unproposed_recipes():
    annotations = [
        _annotation("agree", rec=["hypertension"], not_rec=["chronic_kidney_disease"]),
        _annotation("neutral-is-not-disagreement", rec=["hypertension"]),
        _annotation("disagree", rec=["hypertension", "gout"], not_rec=["stroke"]),
        _annotation("unproposed", rec=["gout"]),
        _annotation("unparsed", rec=["gout"]),
        _annotation("already-out", excluded="missing ingredients: 3"),
    ]
    proposals = {
        "agree": {"hypertension": REC, "chronic_kidney_disease": NOT_REC, "ibs": REC},
        "neutral-is-not-disagreement": {"hypertension": "neutral"},
        "disagree": {"hypertension": NOT_REC, "gout": REC, "stroke": REC},
        "unparsed": None,
    }
    checked = {a["recipe_id"]: a for a in cross_check(annotations, proposals)}
    assert checked["agree"]["excluded"] is None and checked["agree"]["rec"]
    assert checked["agree"]["proposal"] == {"sides": proposals["agree"], "ingredients": {}}
    assert checked["neutral-is-not-disagreement"]["excluded"] is None
    dropped = checked["disagree"]
    assert dropped["excluded"] == f"{DISAGREE}: hypertension, stroke"
    assert dropped["rec"] == dropped["not_rec"] == []
    assert [e["condition"] for e in dropped["dropped"]["rec"]] == ["hypertension", "gout"]
    assert [c["condition"] for c in dropped["loop"]["conflicts"]] == ["hypertension", "stroke"]
    assert checked["unproposed"]["excluded"] == NOT_PROPOSED
    assert checked["unparsed"]["excluded"] == f"{NO_PROPOSAL}: unparseable answer"
    assert checked["already-out"] == annotations[-1]
    assert disagreements(annotations[0], proposals["agree"]) == []


def _says_not_recommend_for_hypertension(request) -> str:
    return json.dumps({"annotations": [
        {"condition": "Hypertension", "decision": "not_recommend", "ingredients": ["salt"]}]})


def test_propose_then_annotate_with_proposals_end_to_end(recipe_build, tmp_path):
    register("says-no-to-hypertension", _says_not_recommend_for_hypertension)
    runner = CliRunner()
    run_dir = tmp_path / "proposals"
    result = runner.invoke(app, ["fam", "propose", "--model", "scripted/says-no-to-hypertension",
                                 "--recipes", str(recipe_build), "--out", str(run_dir),
                                 "--limit", "12", "--concurrency", "2"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert len(records) == 12 and all(r["parse_ok"] for r in records)
    plain, checked = tmp_path / "plain", tmp_path / "checked"
    for target, extra in ((plain, []), (checked, ["--proposals", str(run_dir)])):
        result = runner.invoke(app, ["fam", "annotate", "--recipes", str(recipe_build),
                                     "--out", str(target), *extra])
        assert result.exit_code == 0, result.output
    before = {a["recipe_id"]: a for a in map(json.loads, (plain / "annotations.jsonl")
                                               .read_text().splitlines())}
    after = {a["recipe_id"]: a for a in map(json.loads, (checked / "annotations.jsonl")
                                              .read_text().splitlines())}
    proposed = {r["item_id"] for r in records}
    for rid, annotation in after.items():
        original = before[rid]
        if original["excluded"]:
            assert annotation["excluded"] == original["excluded"]
        elif rid not in proposed:
            assert annotation["excluded"] == NOT_PROPOSED
        elif any(e["condition"] == "hypertension" for e in original["rec"]):
            assert annotation["excluded"] == f"{DISAGREE}: hypertension"
        else:
            assert annotation["excluded"] is None and annotation["rec"] == original["rec"]
    disagreeing = sum(a["excluded"] == f"{DISAGREE}: hypertension" for a in after.values())
    assert 0 < disagreeing < 12  # both branches are exercised on these recipes
    summary = json.loads((checked / "summary.json").read_text())
    section = json.loads((checked / "manifest.json").read_text())["annotation"]
    assert section["mode"] == "cross-check" and section["proposals"] == str(run_dir)
    assert section["proposer"] == "scripted/says-no-to-hypertension"
    assert section["proposed"] == 12 and section["dropped_disagreement"] == disagreeing
    assert summary["excluded_by_reason"][NOT_PROPOSED] == sum(
        1 for rid, a in before.items() if not a["excluded"] and rid not in proposed)
