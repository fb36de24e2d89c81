"""Properties of "recommend" over the real FAM-Bench build, each read independently of the
rules: free sugars are recomputed here from the recipe's lines and SR28 (its Sweets group, and
honey, syrups and juices by description), alcohol from the lines' words, and the text a model
reads is searched for HTML entities and wiki markup."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from nutrireason.fam.kb import load_kb

SWEETS_GROUP = "1900"
FREE_SUGAR_DESCRIPTIONS = re.compile(r"(?i)\b(juice|syrup|honey|nectar|marmalade|jam|"
                                     r"preserves|molasses|sweetened)\b")
ALCOHOL = re.compile(r"(?i)\b(wine|beer|ale|lager|stout|rum|vodka|gin|brandy|cognac|whiske?y|"
                     r"bourbon|sherry|liqueur|tequila|sake|vermouth|champagne|prosecco|"
                     r"schnapps|amaretto|marsala|kirsch)\b")
NOT_ALCOHOL = re.compile(r"(?i)\b(ginger ale|root beer|beer cheese|extract|vinegar|"
                         r"non-?alcoholic)\b")
DRINK_WORDS = re.compile(r"(?i)\b(lemonade|punch|smoothie|shake|sangria|cocktail|tea|coffee|"
                         r"lassi|cider|eggnog|juice|soda|drink|beverage|sharbat|milk)\s*$")
MARKUP = re.compile(r"&[a-zA-Z]+;|&#x?[0-9a-fA-F]+;|<ref|</ref>|<[a-z]+[^<>]*>|\[\[|''")
ENERGY_SHARE, DRINK_LOW_PER_100G = 0.10, 2.5


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def built(real_build, recipe_build, sr28) -> tuple[list[dict], dict[str, dict], Any]:
    recipes = {r["record"]["id"]: r for r in _jsonl(recipe_build / "recipes.jsonl")}
    return _jsonl(real_build / "dish.jsonl"), recipes, sr28


def _value(nutrients, ndb: str, name: str) -> float:
    if ndb not in nutrients.index:
        return 0.0
    value = nutrients.loc[ndb, name]
    return 0.0 if value != value else float(value)


def free_sugars(recipe: dict, sr28) -> tuple[float, float]:
    """(share of energy, grams per 100 g) of free sugars, read from SR28 alone."""
    foods = sr28.foods.set_index("ndb_no")
    nutrients = sr28.nutrients.set_index("ndb_no")
    energy = sugars = mass = 0.0
    for row in recipe["ingredients"]:
        ndb, grams = row.get("ndb_no"), row.get("grams")
        if not ndb or not grams:
            continue
        mass += grams
        energy += grams * _value(nutrients, ndb, "calories") / 100
        food = foods.loc[ndb]
        if str(food["group_code"]) == SWEETS_GROUP or \
                FREE_SUGAR_DESCRIPTIONS.search(str(food["description"])):
            sugars += grams * _value(nutrients, ndb, "sugar") / 100
    return (4 * sugars / energy if energy else 0.0), (100 * sugars / mass if mass else 0.0)


def is_drink(recipe: dict) -> bool:
    record = recipe["record"]
    return "beverage" in str(record.get("category") or "").lower() or \
        bool(DRINK_WORDS.search(re.split(r"[(,]", record["title"])[0].strip()))


def recommended(built) -> list[tuple[dict, dict]]:
    dish, recipes, _ = built
    return [(item, recipes[item["recipe_id"]]) for item in dish
            if item["gold"]["decision"] == "recommend"]


def test_no_recommended_dish_is_high_in_free_sugars(built):
    sr28 = built[2]
    high = []
    for item, recipe in recommended(built):
        share, per_100g = free_sugars(recipe, sr28)
        too_sweet = per_100g > DRINK_LOW_PER_100G if is_drink(recipe) else share > ENERGY_SHARE
        if too_sweet:
            high.append((item["recipe_id"], item["condition"], round(share, 3),
                         round(per_100g, 2)))
    assert high == []


def test_no_recommended_dish_holds_alcohol_for_a_condition_that_limits_it(built):
    kb = load_kb()
    limits = {c for c, entry in kb.items()
              if any("alcohol" in entry.side(s).concepts for s in ("avoid", "limit"))}
    assert {"hypertension", "stroke", "cardiovascular_disease", "type_2_diabetes", "obesity",
            "chronic_kidney_disease"} <= limits
    found = [(item["recipe_id"], item["condition"], row["line"])
             for item, recipe in recommended(built) for row in recipe["ingredients"]
             if item["condition"] in limits and ALCOHOL.search(row["line"])
             and not NOT_ALCOHOL.search(row["line"])]
    assert found == []


def test_no_text_a_model_reads_holds_entities_or_markup(real_build):
    found = []
    for name in ("dish.jsonl", "rank.jsonl"):
        for item in _jsonl(real_build / name):
            dishes = [item["dish"]] if "dish" in item else list(item["dishes"].values())
            for dish in dishes:
                for text in [dish.get("title", ""), *map(str, dish.get("ingredients") or []),
                             *map(str, dish.get("instructions") or [])]:
                    if MARKUP.search(text):
                        found.append((item["id"], text[:80]))
    assert found == []


def test_every_cited_name_is_a_reading_of_its_own_line(built):
    """A rationale names a food on the dish's lines by its own name (its head word stands in
    the line or in the SR28 food the line was read as) or by the class it belongs to (brandy:
    liquor); never another food (a cucumber named "celery")."""
    from nutrireason.fam.vocabulary import CLASS_NAMES

    dish, recipes, _ = built
    wrong = []
    for item in dish:
        described = {row["line"]: str(row.get("sr28_description") or "").lower()
                     for row in recipes[item["recipe_id"]]["ingredients"]}
        rows = item["gold"]["ingredients"]
        for name in item["gold"]["rationale"]:
            if name in CLASS_NAMES:
                continue
            head = name.split()[-1]
            stem = head[:max(4, len(head) - 2)]
            lines = [row["line"] for row in rows if row["canonical"] == name]
            if not any(stem in line.lower() or stem in described.get(line, "")
                       for line in lines):
                wrong.append((item["id"], name, lines[:1]))
    assert wrong == []


CONDIMENT_WORDS = re.compile(r"(?i)\b(sauce|dressing|vinaigrette|salsa|relish|chutney|ketchup|"
                             r"catsup|mustard|mayonnaise|aioli|pesto|dip|gravy|marinade|rub|"
                             r"seasoning|paste|icing|frosting|glaze|syrup|jam|jelly|preserves|"
                             r"marmalade|curd|spread|butter|oil|vinegar)\b")


@lru_cache(maxsize=1)
def written_portions() -> dict[str, Any]:
    """The serving ranges written in fam_rules.yaml (read once)."""
    from nutrireason.standards import standards_dir

    return yaml.safe_load((standards_dir() / "fam_rules.yaml").read_text())["portions"]


def plausible_range(recipe: dict) -> tuple[float, float]:
    """The plausible serving for the recipe's kind, read from its title and category here and
    from the ranges written in fam_rules.yaml."""
    # the dish's own name: "Chicken in Cream Sauce" is chicken, "Tomato Sauce (Rwandan)" sauce
    words = re.split(r"[(,]|\s(?:in|with|on|over)\s", recipe["record"]["title"])[0].split()
    kind = "drink" if is_drink(recipe) else \
        "condiment" if words and CONDIMENT_WORDS.search(words[-1]) else "dish"
    low, high = written_portions()[kind]["plausible"]
    return float(low), float(high)


def test_no_per_serving_veto_rests_on_an_implausible_serving(built, fam_pool):
    dish, recipes, _ = built
    annotations = {a["recipe_id"]: a for a in _jsonl(fam_pool / "annotations.jsonl")}
    outside = []
    for item in dish:
        if item["gold"]["decision"] != "not_recommend":
            continue
        recipe = recipes[item["recipe_id"]]
        nutrition = recipe.get("nutrition") or {}
        per_serving = (nutrition.get("per_serving") or {}).get("calories")
        per_100g = (nutrition.get("per_100g") or {}).get("calories")
        entry = next(e for e in annotations[item["recipe_id"]]["not_rec"]
                     if e["condition"] == item["condition"])
        for fired in entry["provenance"]:
            if fired["rule"] != "nutrient_veto" or fired.get("overruled") or \
                    fired["basis"] != "per serving":
                continue
            grams = 100.0 * per_serving / per_100g if per_serving and per_100g else None
            low, high = plausible_range(recipe)
            if grams is None or not low <= grams <= high:
                outside.append((recipe["record"]["title"], item["condition"], grams))
    assert outside == [], outside
