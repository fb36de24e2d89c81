"""Names added to the reviewed ingredient map from the builds' unresolved lines, checked through
the public resolver on the real SR28. The lines are written for these tests; each expected food
was looked up by hand in SR28's FOOD_DES for the reason given beside it."""

from __future__ import annotations

import pytest

from nutrireason.recipes.rules import load_ingredient_map


def test_every_reviewed_food_exists_with_its_description(sr28):
    described = dict(zip(sr28.foods["ndb_no"], sr28.foods["description"], strict=True))
    reviewed = load_ingredient_map().names
    wrong = {name: (ndb, text) for name, (ndb, text) in reviewed.items()
             if ndb is not None and described.get(ndb) != text}
    assert not wrong


@pytest.mark.parametrize(("line", "description", "why"), [
    ("1 tin (400 g) butter beans, drained",
     "Lima beans, large, mature seeds, cooked, boiled, with salt",
     "butter beans are large limas, usually canned; not butter (drained, with no drained "
     "entry in SR28: the cooked beans)"),
    ("3 oz prosciutto, thinly sliced",
     "Pork, cured, ham, center slice, country-style, separable lean only, raw",
     "a dry-cured raw ham; country ham is SR28's dry-cured ham"),
    ("1 can (12 oz) coke", "Beverages, carbonated, cola, regular", "regular cola"),
    ("2 cups corn flakes, crushed", "Cereals ready-to-eat, KELLOGG, KELLOGG'S Corn Flakes",
     "SR28's corn flakes are brand entries"),
    ("10 pretzel rods", "Snacks, pretzels, hard, plain, salted", "rods are hard pretzels"),
    ("1/2 baguette, sliced", "Bread, french or vienna (includes sourdough)", "French bread"),
    ("2 teaspoons garlic salt", "Salt, table", "garlic salt is mostly salt"),
    ("1 cup plain curd (Indian yogurt)",
     "Yogurt, plain, whole milk, 8 grams protein per 8 ounce", "curd is dahi, a yogurt"),
    ("2 green cooking bananas, peeled", "Plantains, raw", "cooking bananas are plantains"),
    ("1 tablespoon Chinese sesame paste", "Seeds, sesame butter, paste",
     "ground whole sesame, within a few percent of tahini"),
])
def test_added_names_resolve_to_the_reviewed_food(resolver, line, description, why):
    assert resolver.ingredient(line).sr28_description == description, why


def test_a_baguette_has_a_reviewed_weight(resolver):
    assert resolver.ingredient("1 baguette").grams == pytest.approx(250)


@pytest.mark.parametrize(("line", "not_this"), [
    ("1 can refrigerated cinnamon rolls", "Spices, cinnamon, ground"),
    ("1/2 cup vegan parmesan cheese", "Cheese, parmesan, grated"),
    ("3 star anise", "Spices, anise seed"),
    ("1/4 cup homemade or purchased lemon curd",
     "Yogurt, plain, whole milk, 8 grams protein per 8 ounce"),
])
def test_other_foods_are_not_taken_for_the_named_one(resolver, line, not_this):
    assert resolver.ingredient(line).sr28_description != not_this


@pytest.mark.parametrize(("name", "reason_word"), [
    ("nutritional yeast", "not in sr28"),
    ("star anise", "anise seed"),
    ("tahini sauce", "tahini"),
    ("sourdough starter", "starter"),
    ("recipe chocolate chiffon cake", "sub-recipe"),
])
def test_reviewed_nulls_are_refused_with_their_reason(resolver, name, reason_word):
    assert resolver.matcher.match(name) is None
    reason = resolver.matcher.refusal([name])
    assert reason and reason_word in reason.lower()


def test_a_refused_line_says_no_sr28_food(resolver):
    item = resolver.ingredient("1 cup sourdough starter")
    assert item.ndb_no is None
    assert item.problem.startswith("no SR28 food for 'sourdough starter'")


def test_a_refused_name_with_a_cited_proxy_is_read_through_it(resolver):
    # SR28 has no nutritional yeast (the map refuses the name); its cited proxy is SR28's
    # active dry yeast, marked on the line
    item = resolver.ingredient("2 tablespoons nutritional yeast")
    assert (item.ndb_no, item.match_method) == ("18375", "proxy")
