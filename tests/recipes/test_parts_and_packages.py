"""What part of a food a line uses, and what a package of it holds.

Lines are written for these tests (not copied from any validation file); each expected SR28
food and weight was looked up by hand in SR28's FOOD_DES and WEIGHT (or the reviewed map's
cited unit weight) for the reason beside it.
"""

from __future__ import annotations

import pytest

from nutrireason.recipes.build import standard_can
from nutrireason.recipes.lines import citrus_part


@pytest.mark.parametrize(("main", "parentheticals", "expected", "why"), [
    ("2 limes, juiced", [], "juice of 2 lime", "a juiced lime gives its juice"),
    ("1 lemon", ["juiced"], "juice of 1 lemon", "the use may sit in parentheses"),
    ("1/2 large orange, zested", [], "zest of 1/2 large orange", "a zested orange gives zest"),
    ("1 lemon, zested and juiced", [], "juice of 1 lemon",
     "zest and juice: the juice, the bulk of what is used"),
    ("1 small lemon or lime, juiced", [], "juice of 1 small lemon",
     "the first alternative, used for its juice"),
    ("4 oranges, zested and split into segments", [], None, "the segments are eaten too"),
    ("1 lemon, cut into wedges", [], None, "wedges are the fruit"),
    ("1 lemon", [], None, "nothing says only the juice or zest is used"),
    ("2 cups lemon juice", [], None, "a measured juice is already juice"),
])
def test_citrus_used_for_juice_or_zest(main, parentheticals, expected, why):
    assert citrus_part(main, parentheticals) == expected, why


@pytest.mark.parametrize(("line", "description", "grams", "why"), [
    ("2 limes, juiced", "Lime juice, raw", 88.0, "SR28 09160 '1 lime yields' 44 g of juice"),
    ("1/2 lemon (juiced)", "Lemon juice, raw", 24.0, "SR28 09152 '1 lemon yields' 48 g"),
    ("1 orange, zested", "Orange peel, raw", 12.0,
     "the reviewed map's zest of one orange, 2 tbsp at SR28's 6 g per tbsp"),
    ("1 orange, juiced and zested", "Orange juice, raw", 86.0,
     "SR28 09206 '1 fruit yields' 86 g of juice"),
    ("1 package store-bought angel food cake", "Cake, angelfood, commercially prepared", 340.0,
     "a package holds one cake: SR28 18086 'cake (9\" dia x 4\")' 340 g"),
    ("1 package pound cake", "Cake, pound, commercially prepared, butter (includes fresh and "
     "frozen)", 365.269, "pound cake is a food; one loaf is SR28 18120's 1/6 loaf 61 g x 6"),
    ("2 cups frozen corn", "Corn, sweet, yellow, frozen, kernels cut off cob, unprepared", 272.0,
     "a cup of frozen corn is kernels: SR28 11178 '1 cup' 136 g, not corn on the cob"),
    ("4 frozen ears of corn", "Corn, sweet, yellow, frozen, kernels on cob, unprepared", 500.0,
     "ears are corn on the cob: SR28 11180 '1 ear, yields' 125 g"),
    ("1 orange, peel removed", "Oranges, raw, all commercial varieties", 131.0,
     "'orange, peel' across a comma is no orange peel: SR28 09200 '1 fruit' 131 g"),
    ("1 pound cake flour", "Wheat flour, white, cake, enriched", 453.592,
     "a pound of cake flour: 'pound' is the unit when cake flour follows"),
    ("15 oz black beans (canned, drained)",
     "Beans, black turtle, mature seeds, cooked, boiled, with salt", 242.389,
     "15 oz is a can's net weight; drained solids are 0.57 of it (cooking_yields.yaml), "
     "read as the cooked beans (SR28 has no drained black beans)"),
    ("1/2 cup plain Greek yogurt", "Yogurt, Greek, plain, whole milk", 113.52,
     "strained yogurt by its tub labels' 3/4 cup = 170 g (4.73 g a tsp), not 196 g a cup"),
    ("250 g chickpeas (canned, drained)", "Chickpeas (garbanzo beans, bengal gram), mature "
     "seeds, canned, drained solids", 250.0, "250 g is no can size: the drained weight itself"),
])
def test_part_and_package_weights(resolver, line, description, grams, why):
    item = resolver.ingredient(line)
    assert (item.sr28_description, item.grams) == (description, pytest.approx(grams)), \
        (why, item.grams_method)


@pytest.mark.parametrize("line", ["2 limes, zested", "zest of 1 lime", "1 tsp lime zest"])
def test_lime_zest_is_not_a_whole_lime(resolver, line):
    """SR28 has no lime peel: the zest stays unmatched, never 67 g of whole lime."""
    item = resolver.ingredient(line)
    assert item.ndb_no is None and "no SR28 food" in (item.problem or "")


@pytest.mark.parametrize(("grams", "expected"), [
    (425.243, True), (411.0, True), (400.0, True), (793.8, True), (250.0, False), (500.0, False),
])
def test_standard_can_sizes(grams, expected):
    assert standard_can(grams) is expected


def _fried(title: str, oil: str, steps: list[str]):
    from nutrireason.recipes.schema import RecipeRecord

    return RecipeRecord(id="f", title=title, servings=4, instructions=steps,
                        ingredients=["1 lb shrimp, peeled", "1 cup all-purpose flour",
                                     "2 eggs", oil])


@pytest.mark.parametrize(("title", "oil", "steps", "excluded", "why"), [
    ("Fried shrimp", "2 quarts peanut oil", ["Heat the oil to 375°F.", "Fry the shrimp."], True,
     "two quarts of oil in a recipe that fries is a bath: excluded, not 17,000 kcal eaten"),
    ("Shrimp fritters", "1 cup vegetable oil, for frying", [], True,
     "a cup of oil the line says is for frying is a bath too"),
    ("Shrimp bake", "2 quarts peanut oil", ["Bake 20 minutes."], False,
     "a recipe whose steps never fry keeps its oil as written"),
    ("Shrimp in garlic oil", "2 quarts olive oil", ["Fry the garlic in the oil."], False,
     "a title that names the oil: the oil is the dish"),
    ("Fried shrimp", "2 tablespoons peanut oil", ["Fry the shrimp."], False,
     "a pan-fry's spoonfuls of oil are eaten"),
])
def test_a_deep_frying_bath_excludes_its_recipe(resolver, title, oil, steps, excluded, why):
    resolved = resolver.recipe(_fried(title, oil, steps))
    assert (not resolved.kept and "deep-frying oil" in (resolved.exclusion or "")) is excluded, \
        (why, resolved.exclusion)
