"""Properties every gold label of the offline build must have, checked over the whole pool with
word lists and amounts written here, not with the rules that made the labels:

* no rationale cites water; no NotRec rationale cites an ingredient the condition lists only as
  beneficial; a gluten-free qualified ingredient is never a gluten source;
* every celiac NotRec names a gluten source; no gout NotRec rests on plain sugar alone;
* no IBS Rec dish holds onion or garlic in more than a trace;
* every dish-level condition keeps at least 40 % of its minority label (test_instances).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from nutrireason.fam.annotate import recipe_ingredients
from nutrireason.fam.kb import load_kb
from nutrireason.fam.pool import food_table
from nutrireason.fam.vocabulary import Vocabulary

GLUTEN_WORDS = re.compile(
    r"(?i)\b(wheat|flour|bread|breadcrumbs?|crumbs?|pasta|spaghetti|macaroni|noodles?|"
    r"vermicelli|lasagne|lasagna|couscous|semolina|bulgur|spelt|farro|barley|rye|malt|malted|"
    r"beer|ale|lager|soy sauce|shoyu|oats?|oatmeal|rolled oats|cereals?|crackers?|pastry|"
    r"pie crust|biscuits?|cookies?|cake|pretzels?|toast|tortillas?|pancakes?|seitan|"
    r"croutons?|dumpling|phyllo|filo|panko|roux|snacks|beverages|french toast|dessert|"
    # sources the Celiac Disease Foundation names whose name says no grain
    r"teriyaki|hoisin|oyster sauce|gravy|cream of \w+(?: \w+)? soup|white sauce|"
    r"brewer'?s yeast)\b")
GLUTEN_FREE = re.compile(r"(?i)gluten[- ]?free|\bgf\b")
PLAIN_SUGAR = re.compile(r"(?i)\b(sugar|honey|jam|jelly|preserves|marmalade|molasses|treacle|"
                         r"maple syrup|golden syrup|corn syrup|syrup|candy|caramel|"
                         r"chocolate chips|icing|frosting)\b")
FRUCTOSE_RICH = re.compile(r"(?i)agave|high[- ]fructose|juice|soda|cola|soft drink|lemonade")
# A sweetened drink is the sugar-sweetened beverage ACR 2020 asks people with gout to limit:
# its sugar is the drink's, not "plain sugar alone" (read from the title, not from the rules).
DRINK_TITLE = re.compile(r"(?i)\b(lemonade|limeade|soda|cola|punch|smoothie|milkshake|shake|"
                         r"juice|tea|chai|coffee|cocoa|drink|beverage|lassi|eggnog|nog|cordial|"
                         r"sharbat|sherbet|sangria|wine|beer|ale|cocktail|liqueur|limoncello|"
                         r"grenadine|wassel|wassail|shikanjvi|umeshu|ume-shu|gira)\b")
ONION_GARLIC = re.compile(r"(?i)\b(onions?|garlic|shallots?|leeks?)\b")
ALTERNATIVE = re.compile(r"(?i)\(\s*or\b[^)]*\)|\sor\s.*$")
TRACE_G = 0.5  # grams per serving


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def pool(fam_pool, recipe_build) -> list[tuple[dict, dict]]:
    recipes = {r["record"]["id"]: r for r in _jsonl(recipe_build / "recipes.jsonl")}
    return [(a, recipes[a["recipe_id"]]) for a in _jsonl(fam_pool / "annotations.jsonl")]


def _entries(annotation: dict, key: str, condition: str | None = None) -> list[dict]:
    return [e for e in annotation[key] if condition is None or e["condition"] == condition]


def _lines_of(recipe: dict, provenance: list[dict], names: list[str]) -> list[str]:
    """The recipe lines behind cited canonical names (from the provenance that cites them)."""
    lines = [p["line"] for p in provenance if p.get("ingredient") in names and p.get("line")]
    return lines or [i["line"] for i in recipe["ingredients"]]


def test_the_pool_is_large_enough_to_mean_something(pool):
    with_entries = [a for a, _ in pool if a["rec"] or a["not_rec"]]
    assert len(with_entries) > 1500


def test_no_rationale_cites_water(pool):
    cited = [(a["title"], e["condition"]) for a, _ in pool for key in ("rec", "not_rec")
             for e in _entries(a, key) if "water" in e["ingredients"]]
    assert cited == []


def test_no_not_recommend_rationale_cites_a_food_listed_only_as_beneficial(pool, recipe_build):
    kb = load_kb()
    wrong = []
    for annotation, _ in pool:
        for entry in _entries(annotation, "not_rec"):
            condition = kb[entry["condition"]]
            for fired in entry["provenance"]:
                if fired.get("overruled") or fired["rule"] not in ("ingredient_concept",
                                                                    "food_list"):
                    continue
                listed = fired.get("concept") or fired.get("food")
                on = [s for s in ("beneficial", "limit", "avoid")
                      if listed in condition.side(s).concepts + condition.side(s).foods]
                if on == ["beneficial"]:
                    wrong.append((annotation["title"], entry["condition"], listed))
    assert wrong == []


def test_veto_carriers_are_never_beneficial_only_or_water(pool, sr28):
    """A nutrient veto's named carriers are never water and never an ingredient whose concepts
    and foods sit on the condition's beneficial side and on no other."""
    kb, vocabulary, foods = load_kb(), Vocabulary.load(), food_table(sr28)
    wrong, checked = [], 0
    for annotation, recipe in pool:
        vetoes = [(e["condition"], p) for e in _entries(annotation, "not_rec")
                  for p in e["provenance"] if p["rule"] == "nutrient_veto"]
        if not vetoes:
            continue
        items = {i.canonical: i for i in recipe_ingredients(recipe, vocabulary, foods)}
        for condition_id, fired in vetoes:
            condition = kb[condition_id]
            for name in fired["ingredients"]:
                checked += 1
                item = items[name]
                listed = item.concepts | item.foods
                sides = {s for s in ("beneficial", "limit", "avoid")
                         if listed & set(condition.side(s).concepts + condition.side(s).foods)}
                if name == "water" or sides == {"beneficial"}:
                    wrong.append((annotation["title"], condition_id, name))
    assert checked > 500 and wrong == []


def test_every_celiac_not_recommend_names_a_gluten_source(pool):
    missing = []
    for annotation, recipe in pool:
        for entry in _entries(annotation, "not_rec", "celiac_disease"):
            lines = _lines_of(recipe, entry["provenance"], entry["ingredients"])
            sources = [line for line in lines
                       if GLUTEN_WORDS.search(line) and not GLUTEN_FREE.search(line)]
            named = [n for n in entry["ingredients"] if GLUTEN_WORDS.search(n)]
            if not sources and not named:
                missing.append((annotation["title"], entry["ingredients"], lines))
    assert missing == []


def test_a_gluten_free_ingredient_is_never_a_gluten_source(pool):
    cited = []
    for annotation, _ in pool:
        for entry in _entries(annotation, "not_rec", "celiac_disease"):
            for fired in entry["provenance"]:
                if fired.get("overruled") or "line" not in fired:
                    continue
                used = ALTERNATIVE.sub(" ", fired["line"])  # the food used, not an option
                if GLUTEN_FREE.search(used) or \
                        fired.get("ingredient", "").startswith("gluten-free"):
                    cited.append((annotation["title"], fired["line"]))
    assert cited == []


def test_no_gout_not_recommend_rests_on_plain_sugar_alone(pool):
    sugar_only = []
    for annotation, _ in pool:
        drink = bool(DRINK_TITLE.search(annotation["title"]))
        for entry in _entries(annotation, "not_rec", "gout"):
            lines = [p["line"] for p in entry["provenance"]
                     if not p.get("overruled") and p.get("line") and not
                     (drink and p.get("concept") == "sugar_sweetened_beverages")]
            vetoes = [p for p in entry["provenance"] if p["rule"] == "nutrient_veto"]
            if lines and not vetoes and all(PLAIN_SUGAR.search(line) and not
                                            FRUCTOSE_RICH.search(line) for line in lines):
                sugar_only.append((annotation["title"], lines))
    assert sugar_only == []


def _servings(recipe: dict) -> float | None:
    nutrition = recipe.get("nutrition") or {}
    per_serving = (nutrition.get("per_serving") or {}).get("calories")
    per_100g = (nutrition.get("per_100g") or {}).get("calories")
    total = nutrition.get("total_grams")
    if per_serving and per_100g and total:
        return total / (100.0 * per_serving / per_100g)
    return None


def test_no_ibs_recommend_holds_onion_or_garlic_beyond_a_trace(pool):
    found = []
    for annotation, recipe in pool:
        if not _entries(annotation, "rec", "ibs"):
            continue
        servings = _servings(recipe)
        for item in recipe["ingredients"]:
            if not ONION_GARLIC.search(item["line"]) or not item.get("ndb_no"):
                continue
            grams = item.get("grams")
            # Unknown servings: the largest plausible serving is the whole of a small dish.
            per_serving = None if grams is None else grams / servings if servings else grams
            if per_serving is None or per_serving >= TRACE_G:
                found.append((annotation["title"], item["line"], per_serving))
    assert found == []


def test_every_condition_has_both_labels_in_the_pool(pool):
    for condition in load_kb():
        rec = sum(bool(_entries(a, "rec", condition)) for a, _ in pool)
        not_rec = sum(bool(_entries(a, "not_rec", condition)) for a, _ in pool)
        assert rec >= 10 and not_rec >= 10, condition


def test_a_line_with_unknown_sodium_names_no_sodium(sr28):
    """A low-sodium food SR28 has only salted ("low-sodium tamari" as plain tamari) carries
    no sodium figure into FAM-Bench's evidence: a sodium veto cannot name it as a carrier."""
    recipe = {"ingredients": [
        {"line": "2 tbsp low-sodium tamari", "ndb_no": "16124", "grams": 36.0,
         "sr28_description": "Soy sauce made from soy (tamari)", "states": ["qual:low_sodium"],
         "unknown_nutrients": ["sodium"]},
        {"line": "1 tbsp tamari", "ndb_no": "16124", "grams": 18.0,
         "sr28_description": "Soy sauce made from soy (tamari)", "states": []}]}
    low, plain = recipe_ingredients(recipe, Vocabulary.load(), food_table(sr28))
    assert "sodium" not in low.nutrients and low.nutrients["protein"] > 0
    assert plain.nutrients["sodium"] > 5000
