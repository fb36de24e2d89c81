"""Rule hits as the review page shows them, on provenance steps copied from the real pool (the
reason for each expected value beside it), and the impossible-nutrition flags."""

from __future__ import annotations

import pytest

from nutrireason.fam.kb import load_kb
from nutrireason.review.provenance import (
    impossible_nutrition,
    provenance_notes,
    rule_rows,
    rule_sources,
)

AHA = "American Heart Association: saturated fat 6% of calories"
VETO = {"basis": "per 100 g x 50 g serving (servings unknown)", "ingredients": ["butter",
        "chocolate"], "max": 5.0, "min": None, "nutrient": "saturated_fat", "per": "serving",
        "rule": "nutrient_veto", "source": AHA + " (release row 19)", "unit": "g",
        "value": 6.865}
BUTTER = {"food": "butter", "ingredient": "butter", "kb_side": "limit",
          "line": "1¼ sticks (150 g) butter, softened", "mass_share": 0.1856,
          "rule": "food_list"}
PEANUTS = {"concept": "healthy_unsaturated_fats", "ingredient": "peanuts",
           "kb_side": "beneficial", "line": "¼ cup roasted groundnuts", "mass_share": 0.2664,
           "overruled": True, "rule": "ingredient_concept"}
SODIUM_MEAL = {"concept": "lower_sodium_meals", "dish_level": True, "ingredient": "cornstarch",
               "kb_side": "beneficial", "line": "1 cup corn starch", "mass_share": 1.0,
               "max_per_100g": 140.0, "rule": "ingredient_concept", "sodium_per_100g": 4.772}
UNDECIDED = {"max": 700.0, "min": None, "nutrient": "potassium", "per_100g": 210.827,
             "rule": "portion_undecidable", "serving_range_g": [50.0, 350.0],
             "source": "release row 47", "unit": "mg", "why": "servings unknown"}


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def test_a_nutrient_veto_shows_its_value_basis_threshold_source_and_carriers(kb):
    row, = rule_rows([VETO], kb["cardiovascular_disease"])
    # the value the rule compared (not "None", as a per_serving key would give), with its basis
    assert row.value == "6.9 g per 100 g x 50 g serving (servings unknown)"
    assert row.threshold == "at most 5 g per serving"
    assert row.source.startswith(AHA)
    assert "carried by butter, chocolate" in row.subject and not row.overruled


def test_a_list_hit_shows_its_share_the_side_threshold_and_both_sources(kb):
    row, = rule_rows([BUTTER], kb["cardiovascular_disease"])
    assert row.value == "18.6% of the recipe's mass"  # 0.1856 of the mass
    # a limit-list food counts from fam_rules.yaml's limit_min_share (5 %)
    assert row.threshold == "at least 5% of the mass"
    assert "FAM-Bench release condition_rules.json" in row.source  # butter: a release food
    assert rule_sources().sources["limit_min_share"] in row.source
    assert row.side == "limit list, food butter"


def test_a_deviation_cites_its_own_source(kb):
    alcohol = {"concept": "alcohol", "ingredient": "red wine", "kb_side": "limit",
               "line": "1 cup red wine", "mass_share": 0.12, "rule": "ingredient_concept"}
    row, = rule_rows([alcohol], kb["cardiovascular_disease"])
    # alcohol was added to this condition's limit list by a listed deviation (AHA 2021)
    assert "Lichtenstein et al. 2021" in row.source


def test_an_overruled_hit_is_marked_and_a_dish_level_hit_shows_sodium(kb):
    peanuts, meal = rule_rows([PEANUTS, SODIUM_MEAL], kb["hypertension"])
    assert peanuts.overruled and peanuts.threshold == "at least 10% of the mass"
    assert meal.value == "sodium 5 mg per 100 g" and meal.threshold == "at most 140 mg per 100 g"
    assert "21 CFR 101.61" in meal.source


def test_an_undecided_portion_shows_the_serving_range(kb):
    row, = rule_rows([UNDECIDED], kb["chronic_kidney_disease"])
    assert row.value == "210.8 mg per 100 g; servings unknown (a serving of 50-350 g decides)"
    assert row.threshold == "at most 700 mg per serving"


def test_notes_are_not_rule_hits(kb):
    fallback = {"rule": "ingredient_fallback", "ingredients": ["flour", "sugar"]}
    assert rule_rows([fallback], kb["obesity"]) == []
    assert "flour, sugar" in provenance_notes([fallback])[0]


@pytest.mark.parametrize("per_100g, found", [
    # sugars are part of carbohydrate: 107.5 g beside 29.1 g cannot both be true
    ({"sugar": 107.5, "carbohydrates": 29.1}, "sugar 107.5 g is above carbohydrate"),
    ({"saturated_fat": 12.0, "total_fat": 8.0}, "saturated fat 12.0 g is above total fat"),
    ({"saturated_fat": 12.0, "fat": 8.0}, "saturated fat 12.0 g is above total fat"),
    ({"saturated_fat": 5.0, "total_fat": 8.0}, None),
    # 4 x 10 + 4 x 20 + 9 x 5 = 165 kcal expected; 400 kcal is far from it
    ({"calories": 400, "protein": 10, "carbohydrates": 20, "fat": 5}, "energy 400 kcal"),
    ({"calories": 170, "protein": 10, "carbohydrates": 20, "fat": 5}, None),  # within 25 %
    ({"sugar": 29.4, "carbohydrates": 29.1}, None),  # rounding
])
def test_impossible_nutrition(per_100g, found):
    flags = impossible_nutrition(per_100g)
    assert (flags == []) if found is None else (len(flags) == 1 and flags[0].startswith(found))


def test_an_entry_shows_units_instructions_clean_text_and_the_assumed_serving(tmp_path):
    import json

    from nutrireason.review.items import load_items

    recipe = {"record": {"id": "fudge", "title": "Mom&#39;s  fudge", "servings": None,
                         "ingredients": ["1 cup sugar &amp; cocoa", "2 tbsp butter"],
                         "instructions": ["Melt the butter.", "Stir in  the sugar."]},
              "ingredients": [{"line": "1 cup sugar &amp; cocoa", "food": "sugar"},
                              {"line": "2 tbsp butter", "food": "butter"}],
              "nutrition": {"per_100g": {"calories": 400.0, "sugar": 107.5,
                                         "carbohydrates": 29.1, "potassium": 210.0},
                            "per_serving": {}, "total_grams": 300.0}}
    pool = {"recipe_id": "fudge", "excluded": None, "excluded_entries": [], "rec": [],
            "not_rec": [{"condition": "type_2_diabetes", "ingredients": ["sugar"],
                         "provenance": [VETO]}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(pool) + "\n")
    (tmp_path / "r.jsonl").write_text(json.dumps(recipe) + "\n")
    item, = load_items(tmp_path / "a.jsonl", tmp_path / "r.jsonl",
                       derived=lambda recipe: {"total_fat": 20.0})
    assert item.title == "Mom's fudge" and item.lines[0] == "1 cup sugar & cocoa"
    assert item.instructions == ("Melt the butter.", "Stir in the sugar.")
    assert item.units["potassium"] == "mg" and item.units["calories"] == "kcal"
    assert item.per_100g["total_fat"] == 20.0  # derived: the recipe table has no total fat
    assert "serving of 50 g" in item.serving_note  # from the veto's basis
    assert item.impossible and item.impossible[0].startswith("sugar 107.5 g")
