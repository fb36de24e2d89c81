"""The paper's annotation loop (section 3.3 "Validation", Appendix E): the model proposes a side
and the cited ingredients per condition, the rules check each proposal, recipes with conflicts
are asked once more with the conflicts surfaced, and what still disagrees leaves the pool.

Offline and fast: a hand-written resolved-recipe build (real SR28 foods), scripted models whose
answers are derived from the rules' own annotation (so the tests follow the rules as they
change), and one run through the loopback OpenAI-compatible server via the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.fam.annotate import annotate, load_thresholds
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import load_kb
from nutrireason.fam.pool import food_table
from nutrireason.fam.proposals import (
    DISAGREE_AFTER,
    MODE_LOOP,
    NO_CORRECTION,
    NO_PROPOSAL,
    NOT_PROPOSED,
    Proposer,
    condition_names,
    conflicts,
    finding_text,
    resolve,
)
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.methods.fam_prompts import parse_proposal
from nutrireason.models.errors import ModelError
from nutrireason.models.scripted import register
from nutrireason.models.types import ChatRequest
from nutrireason.pipeline.annotation_loop import build_pool
from tests.fam.test_annotate import plausible_tables
from tests.models.fake_openai import FakeOpenAI

KB = load_kb()
NAMES = condition_names(KB)
SECRET = "sk-test-LOOP-SECRET-123"


def words(text: str) -> str:
    """CLI output with its line wrapping undone (the console width varies)."""
    return " ".join(text.split())


def recipe(rid: str, items: list[tuple[str, str, float]], per_serving: dict | None = None,
           kept: bool = True) -> dict:
    """A resolved recipe as `recipes build` writes it (recipes.jsonl), hand-made."""
    lines = [line for line, _, _ in items] or ["a pinch of something"]
    return {"record": {"id": rid, "title": rid, "ingredients": lines, "servings": 2,
                       "instructions": ["Combine everything.", "Cook and serve."]},
            "ingredients": [{"line": line, "ndb_no": ndb, "grams": grams,
                             "sr28_description": None} for line, ndb, grams in items],
            "kept": kept, "exclusion": None if kept else "unresolved ingredients: 1",
            "nutrition": plausible_tables(per_serving) if kept else None}


RECIPES = [
    recipe("spinach-salad", [("4 cups spinach", "11457", 120), ("1 tbsp olive oil", "04053", 14)]),
    recipe("salty-soup", [("1 tsp salt", "02047", 6), ("4 cups water", "14411", 960),
                          ("1 onion", "11282", 110)], per_serving={"sodium": 900.0}),
    recipe("chicken-in-wine", [("1 cup red wine", "14096", 240),
                               ("1 chicken breast", "05062", 200), ("1 onion", "11282", 110)]),
    recipe("bacon-beef-stew", [("2 slices bacon", "10123", 50), ("1 lb beef", "13795", 450)]),
    recipe("banana-smoothie", [("1 banana", "09040", 118), ("1 cup milk", "01077", 244)],
           per_serving={"sodium": 100.0}),
    recipe("vague", [], kept=False),
]
# What each scripted model does with each recipe (first answer, correction).
AGREE, FIXED, PERSISTS, GARBLED, ERRORS = (
    "spinach-salad", "salty-soup", "chicken-in-wine", "bacon-beef-stew", "banana-smoothie")
FLIP = {FIXED: "hypertension", PERSISTS: "osteoporosis"}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Responses cached per test, never in the user's data home."""
    monkeypatch.setattr("nutrireason.models.cache.default_cache_path",
                        lambda: tmp_path / "cache" / "responses.sqlite")


@pytest.fixture(scope="module")
def rules(sr28) -> dict[str, dict]:
    """The rules' own annotation of each fixture recipe."""
    vocabulary, foods, thresholds = Vocabulary.load(), food_table(sr28), load_thresholds()
    return {r["record"]["id"]: annotate(r, KB, vocabulary, foods, thresholds) for r in RECIPES}


@pytest.fixture
def build(tmp_path) -> Path:
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "recipes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECIPES))
    return folder


def rule_sides(annotation: dict) -> dict[str, tuple[str, list[str]]]:
    return {e["condition"]: (side, e["ingredients"])
            for key, side in (("rec", REC), ("not_rec", NOT_REC)) for e in annotation[key]}


def answer_json(sides: dict[str, tuple[str, list[str]]]) -> str:
    """A proposal in the contract's shape: every condition, neutral where ``sides`` is silent."""
    rows = []
    for condition, entry in KB.items():
        side, cited = sides.get(condition, ("neutral", []))
        rows.append({"condition": entry.label, "decision": side, "ingredients": cited})
    return json.dumps({"annotations": rows})


def flipped(sides: dict, condition: str) -> dict:
    side, cited = sides[condition]
    return sides | {condition: (NOT_REC if side == REC else REC, cited)}


class Script:
    """A model that answers from the rules' annotation, per recipe as the module table says;
    counts its calls per (recipe, pass)."""

    def __init__(self, rules: dict[str, dict]) -> None:
        self.rules = rules
        self.calls: list[tuple[str, str]] = []

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        title = json.loads(messages[1]["content"])["recipe"]["title"]
        correcting = len(messages) > 2
        self.calls.append((title, "correct" if correcting else "propose"))
        truth = rule_sides(self.rules[title])
        if title == GARBLED:
            return "I would rather not label this dish."
        if title == ERRORS:
            raise ModelError("bad_request", "scripted refusal for this recipe")
        if title in FLIP and (not correcting or title == PERSISTS):
            return answer_json(flipped(truth, FLIP[title]))
        return answer_json(truth)

    def scripted(self, request: ChatRequest) -> str:
        return self(request.model_dump(mode="json")["messages"])

    def served(self, body: dict[str, Any]) -> str:
        try:
            return self(body["messages"])
        except ModelError:
            return "<<server hiccup>>"  # over HTTP the error recipe answers garbage instead


def test_rules_give_every_scripted_case_something_to_disagree_with(rules):
    for rid in (AGREE, FIXED, PERSISTS):
        assert rule_sides(rules[rid])
    for rid, condition in FLIP.items():
        assert condition in rule_sides(rules[rid]), (rid, condition)
    assert rules["vague"]["excluded"]


def test_propose_check_correct_end_to_end(tmp_path, build, rules, sr28):
    script = Script(rules)
    register("loop-script", script.scripted)
    out = tmp_path / "pool"
    proposer = Proposer("scripted/loop-script", out / "loop", concurrency=2, progress=False)
    summary = build_pool(RECIPES, sr28, out, inputs=[build / "recipes.jsonl"], proposer=proposer)
    pool = {a["recipe_id"]: a for a in map(json.loads,
                                           (out / "annotations.jsonl").read_text().splitlines())}

    # agree first time: rule entries kept, the proposal beside them
    agreed = pool[AGREE]
    assert agreed["excluded"] is None and agreed["loop"] == {"outcome": "agreed", "conflicts": []}
    assert (agreed["rec"], agreed["not_rec"]) == (rules[AGREE]["rec"], rules[AGREE]["not_rec"])
    truth = rule_sides(rules[AGREE])
    assert agreed["proposal"]["sides"] == {c: truth.get(c, ("neutral",))[0] for c in KB}
    assert agreed["proposal"]["ingredients"] == {c: i for c, (_, i) in truth.items()}

    # a conflict fixed by the corrective pass: kept, gold still the rules', audit trail kept
    fixed = pool[FIXED]
    assert fixed["excluded"] is None and fixed["loop"]["outcome"] == "corrected"
    assert fixed["rec"] == rules[FIXED]["rec"] and fixed["not_rec"] == rules[FIXED]["not_rec"]
    [conflict] = fixed["loop"]["conflicts"]
    assert conflict["condition"] == "hypertension"
    assert (conflict["proposed"], conflict["rules"]) == (REC, NOT_REC)
    assert any(p["rule"] == "nutrient_veto" and p["nutrient"] == "sodium"
               for p in conflict["rule_provenance"])
    assert fixed["loop"]["conflicts_after"] == []
    assert fixed["proposal"]["sides"]["hypertension"] == NOT_REC

    # a conflict that persists: dropped, with the proposals, conflicts and rule entries
    dropped = pool[PERSISTS]
    assert dropped["excluded"] == f"{DISAGREE_AFTER}: osteoporosis"
    assert dropped["rec"] == dropped["not_rec"] == []
    assert dropped["dropped"] == {"rec": rules[PERSISTS]["rec"],
                                  "not_rec": rules[PERSISTS]["not_rec"],
                                  "excluded_entries": rules[PERSISTS]["excluded_entries"]}
    assert dropped["excluded_entries"] == []
    assert dropped["loop"]["outcome"] == "disagreed"
    assert [c["condition"] for c in dropped["loop"]["conflicts_after"]] == ["osteoporosis"]
    assert dropped["loop"]["correction"]["sides"]["osteoporosis"] == REC

    # unparseable and errored proposals: dropped with their own reasons, never corrected
    assert pool[GARBLED]["excluded"] == f"{NO_PROPOSAL}: unparseable answer"
    assert pool[GARBLED]["loop"]["response"].startswith("I would rather not")
    assert pool[ERRORS]["excluded"] == f"{NO_PROPOSAL}: model error (bad_request)"
    assert pool[ERRORS]["loop"]["error"]["kind"] == "bad_request"
    assert pool["vague"] == rules["vague"]  # excluded by the rules, never proposed

    # one proposal per kept recipe, one correction per recipe in conflict
    assert sorted(script.calls) == sorted(
        [(r, "propose") for r in (AGREE, FIXED, PERSISTS, GARBLED, ERRORS)]
        + [(FIXED, "correct"), (PERSISTS, "correct")])

    # the corrective prompt surfaces the specific conflict and the rule that contradicts it
    correct_dir = out / summary["annotation"]["runs"]["correct"]
    records = {r["item_id"]: r for r in map(json.loads, (correct_dir / "records.jsonl")
                                            .read_text().splitlines())}
    assert set(records) == {f"{FIXED}#correct", f"{PERSISTS}#correct"}
    asked = records[f"{FIXED}#correct"]["requests"][0]["messages"]
    assert [m["role"] for m in asked] == ["system", "user", "assistant", "user"]
    assert 'your proposal said "recommend" for Hypertension' in asked[-1]["content"]
    assert "sodium 900 mg per serving above" in asked[-1]["content"]
    assert "(nutrient_veto" in asked[-1]["content"]
    assert records[f"{FIXED}#correct"]["meta"]["recipe_id"] == FIXED

    # the manifest says what happened
    manifest = json.loads((out / "manifest.json").read_text())
    section = manifest["annotation"]
    assert section["mode"] == MODE_LOOP and section["proposer"] == "scripted/loop-script"
    assert {k: section[k] for k in ("proposed", "agreed_first", "conflicted_first", "corrected",
                                    "dropped_disagreement", "proposal_errors",
                                    "proposal_unparsed", "dropped", "kept", "not_proposed",
                                    "rules_excluded")} == {
        "proposed": 5, "agreed_first": 1, "conflicted_first": 2, "corrected": 1,
        "dropped_disagreement": 1, "proposal_errors": 1, "proposal_unparsed": 1, "dropped": 3,
        "kept": 2, "not_proposed": 0, "rules_excluded": 1}
    assert section["conflicts_by_condition"]["osteoporosis"] == {"first": 1, "persisting": 1}
    assert section["conflicts_by_condition"]["hypertension"] == {"first": 1, "persisting": 0}
    assert summary["model_calls"] == 7
    assert json.loads((out / "summary.json").read_text())["excluded_by_reason"] == {
        "missing ingredients": 1, NO_PROPOSAL: 2, DISAGREE_AFTER: 1}

    # re-running resumes from the records: no new model calls, the same pool
    before = (out / "annotations.jsonl").read_text()
    script.calls.clear()
    again = build_pool(RECIPES, sr28, out, inputs=[build / "recipes.jsonl"], proposer=proposer)
    assert script.calls == [] and again["model_calls"] == 0
    assert (out / "annotations.jsonl").read_text() == before


def test_limit_leaves_the_rest_out_of_the_pool(tmp_path, rules, sr28):
    script = Script(rules)
    register("loop-script-limit", script.scripted)
    out = tmp_path / "pool"
    proposer = Proposer("scripted/loop-script-limit", out / "loop", limit=1, progress=False)
    summary = build_pool(RECIPES, sr28, out, proposer=proposer)
    pool = {a["recipe_id"]: a for a in map(json.loads,
                                           (out / "annotations.jsonl").read_text().splitlines())}
    assert script.calls == [(AGREE, "propose")]
    assert pool[AGREE]["excluded"] is None
    assert all(pool[r]["excluded"] == NOT_PROPOSED for r in (FIXED, PERSISTS, GARBLED, ERRORS))
    assert summary["annotation"]["not_proposed"] == 4 and summary["annotation"]["limit"] == 1


def test_a_correction_that_fails_drops_with_its_own_reason(rules):
    truth = {c: s for c, (s, _) in rule_sides(rules[FIXED]).items()}
    first = {"sides": truth | {"hypertension": REC}, "ingredients": {"hypertension": ["salt"]}}
    error = {"status": "error", "proposal": None, "error": {"kind": "server"}, "response": ""}
    result = resolve(rules[FIXED], first, error)
    assert result["excluded"] == f"{NO_CORRECTION}: model error (server); conflicts: hypertension"
    assert result["loop"]["outcome"] == "no_correction"
    assert result["dropped"]["not_rec"] == rules[FIXED]["not_rec"]
    # a correction that re-answers only the conflicting condition is merged over the first
    partial = {"sides": {"hypertension": NOT_REC}, "ingredients": {"hypertension": ["salt"]}}
    kept = resolve(rules[FIXED], first, partial)
    assert kept["excluded"] is None and kept["proposal"]["sides"] == truth
    assert kept["loop"]["outcome"] == "corrected"
    # neutral on either side is never a conflict
    assert conflicts(rules[FIXED], {"sides": {"hypertension": "neutral"}}) == []


def test_findings_name_the_rule_and_the_ingredient_or_nutrient():
    veto = {"rule": "nutrient_veto", "nutrient": "sodium", "value": 1200.0, "max": 600.0,
            "min": None, "per": "serving", "unit": "mg", "basis": "per serving",
            "ingredients": ["salt", "soy sauce"]}
    assert finding_text(veto) == ("sodium 1,200 mg per serving above 600 mg "
                                  "(nutrient_veto; main sources: salt, soy sauce)")
    floor = veto | {"nutrient": "iron", "value": 0.5, "max": None, "min": 2.0, "ingredients": []}
    assert finding_text(floor) == "iron 0.5 mg per serving below 2 mg (nutrient_veto)"
    concept = {"rule": "ingredient_concept", "ingredient": "bacon", "line": "2 slices bacon",
               "concept": "processed_meats", "kb_side": "avoid", "mass_share": 0.1}
    assert finding_text(concept) == ("bacon (processed meats) is on the knowledge base's avoid "
                                     "list for this condition (ingredient_concept)")
    assert "25% of the recipe by weight" in finding_text(concept | {"kb_side": "limit",
                                                                    "mass_share": 0.25})
    assert "salt" in finding_text({"rule": "ingredient_fallback", "ingredients": ["salt"]})
    assert finding_text({"rule": "something_new", "nutrient": "fibre"}) == \
        "something_new: nutrient=fibre"


def test_parse_proposal_reads_cited_ingredients_and_older_shapes():
    parsed, mode = parse_proposal(json.dumps({"annotations": [
        {"condition": "Hypertension", "decision": "not_recommend",
         "ingredients": ["Salt", "soy sauce", "salt"]},
        {"condition": "Gout", "decision": "neutral", "ingredients": ["beef"]},
        {"condition": "Osteoporosis", "decision": "recommend"},  # the older contract
    ]}), NAMES)
    assert mode == "json"
    assert parsed["sides"] == {"hypertension": NOT_REC, "gout": "neutral", "osteoporosis": REC}
    assert parsed["ingredients"] == {"hypertension": ["salt", "soy sauce"], "osteoporosis": []}
    paper_shape = json.dumps({"rec": [{"condition": "Obesity", "ingredients": ["spinach"]}],
                              "not_rec": [{"condition": "GERD", "ingredients": "wine, onion"}]})
    parsed, _ = parse_proposal(paper_shape, NAMES)
    assert parsed == {"sides": {"obesity": REC, "gerd": NOT_REC},
                      "ingredients": {"obesity": ["spinach"], "gerd": ["wine", "onion"]}}
    mapping = json.dumps({"annotations": {"Gout": "NotRec", "Stroke": {"decision": "rec"}}})
    assert parse_proposal(mapping, NAMES)[0]["sides"] == {"gout": NOT_REC, "stroke": REC}


def test_rules_only_pool_says_so(tmp_path, build, sr28):
    out = tmp_path / "pool"
    result = CliRunner().invoke(app, ["fam", "annotate", "--recipes", str(build),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "manifest.json").read_text())["annotation"] == {"mode": "rules-only"}
    assert "rules only" in words(result.output)
    assert not (out / "loop").exists()
    assert not any("loop" in json.loads(line) or "proposal" in json.loads(line)
                   for line in (out / "annotations.jsonl").read_text().splitlines())


def test_annotate_with_an_openai_proposer_through_the_loopback_server(
        tmp_path, build, rules, sr28, monkeypatch):
    script = Script(rules)
    out = tmp_path / "pool"
    runner = CliRunner()
    command = ["fam", "annotate", "--proposer", "openai/fake-model", "--recipes", str(build),
               "--out", str(out), "--concurrency", "2"]
    with FakeOpenAI(script.served, lifetime=60) as server:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        result = runner.invoke(app, command)
        assert result.exit_code == 0, result.output
        asked = len(server.requests)
        assert asked == 7  # five proposals, two corrections
        assert all(h["authorization"] == f"Bearer {SECRET}" for h in server.headers)
        assert "annotation: propose-check-correct with openai/fake-model" in words(result.output)
        assert "Annotation loop" in words(result.output)

        section = json.loads((out / "manifest.json").read_text())["annotation"]
        assert section["proposer"] == "openai/fake-model"
        assert (section["agreed_first"], section["corrected"], section["dropped"]) == (1, 1, 3)
        assert section["proposal_unparsed"] == 2  # the error recipe answers garbage over HTTP
        for path in out.rglob("*"):
            if path.is_file():
                assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path

        again = runner.invoke(app, command)  # up to date: nothing is asked
        assert again.exit_code == 0 and "up to date" in words(again.output)
        before = (out / "annotations.jsonl").read_text()
        (out / "manifest.json").unlink()  # force a rebuild: the engine resumes from records
        resumed = runner.invoke(app, command)
        assert resumed.exit_code == 0, resumed.output
        assert "0 model calls" in words(resumed.output)
        assert len(server.requests) == asked
        assert (out / "annotations.jsonl").read_text() == before


def test_proposer_and_proposals_are_one_or_the_other(tmp_path):
    result = CliRunner().invoke(app, ["fam", "annotate", "--proposer", "scripted/echo",
                                      "--proposals", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "not both" in words(result.output)
    assert not (tmp_path / "o").exists()


def test_fam_alone_never_runs_the_engine(tmp_path, sr28):
    """fam's build_pool takes the loop's passes injected; without them it says where they are."""
    from nutrireason.errors import NutriReasonError
    from nutrireason.fam.pool import build_pool as fam_build_pool

    proposer = Proposer("scripted/echo", tmp_path / "loop", progress=False)
    with pytest.raises(NutriReasonError, match="nutrireason.pipeline.annotation_loop.build_pool"):
        fam_build_pool(RECIPES, sr28, tmp_path / "pool", proposer=proposer)
    assert not (tmp_path / "pool").exists()
