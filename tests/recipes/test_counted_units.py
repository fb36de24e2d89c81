"""Counted units SR28 does not weigh (bunches, heads, loaves, cans of no stated size, whole
squash), plant parts named after their plant, plurals of reviewed names, the standard proxies
for stock cubes, unnamed meat, dried fish and aromatic leaves, oil for frying, and states a line
negates. Lines written for the test; each expected SR28 food and figure was looked up by hand
in SR28 (FOOD_DES / WEIGHT) or in ``standards/data/standard_weights.yaml``, with the reason
beside it."""

from __future__ import annotations

import pytest

from nutrireason.errors import DataError
from nutrireason.recipes.match import stem, unique_by_stems
from nutrireason.recipes.parse import line_states
from nutrireason.recipes.schema import RecipeRecord
from nutrireason.recipes.standard_weights import (
    find_standard,
    load_standard_weights,
    standard_unit,
)

# ------------------------------------------------------------------ standard weights


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 bunch parsley", "11297", 70.0, "a soft herb's bunch, 2.5 oz"),
    ("½ bunch fresh dill", "02045", 35.0, "half of a soft herb's bunch (SR28 has sprigs only)"),
    ("1 bunch of coriander leaf (cilantro)", "11165", 70.0,
     "a bunch is fresh: 'coriander leaf' is the reviewed 'coriander leaves', not the dried "
     "spice"),
    ("2 bunches thyme", "02049", 40.0, "a woody herb's pack, 20 g each"),
    ("1 bunch green onions", "11291", 76.0, "USDA Foods: 12 bunches in a 2 lb bag"),
    ("1 bunch kale", "11233", 340.0, "cooking greens by SR28's bunch of spinach"),
    ("1 bunch asparagus", "11011", 454.0, "US asparagus is bunched by the pound"),
    ("1 head celery, diced", "11143", 454.0, "a head of celery, not one 40 g stalk"),
    ("2 loaves white sandwich bread", "18069", 1134.0, "a 20 oz sandwich loaf, not a slice"),
    ("1 loaf italian bread", "18033", 454.0, "an Italian loaf of about a pound"),
    ("1 butternut squash", "11485", 907.0, "a whole butternut squash as bought, 2 lb"),
    ("1 can sweetened condensed milk", "01095", 397.0, "a 14 oz can"),
    ("2 cans coconut milk", "12118", 764.0, "two 13.5 fl oz cans at SR28's cup"),
    ("1 can cream of mushroom soup", "06043", 305.0, "condensed soup: a 10.75 oz can"),
    ("1 can chicken broth", "06194", 411.0, "broth: a 14.5 oz can"),
])
def test_a_unit_sr28_lacks_takes_its_standard_weight(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams)), (why, item.grams_method)
    assert (item.grams_method or "").startswith("standard_weight:"), why


@pytest.mark.parametrize(("line", "grams", "method", "why"), [
    ("1 tin tomatoes", 411.0, "sr28_weight:1 can",
     "a tin is a can: SR28's own can of tomatoes (411 g), not one tomato"),
    ("2 tins chopped tomatoes", 822.0, "sr28_weight:1 can", "two of SR28's cans"),
    ("1 can tomato paste", 170.0, "sr28_weight:1 can", "SR28's 6 oz can comes first"),
    ("1 can black beans, drained", 242.25, "standard_weight:1 can=425 g; drained",
     "a 15 oz can of no stated size, then its drained solids (x0.57)"),
    ("1 butternut squash, peeled and cubed", 761.88, "standard_weight:1 whole=907 g; trimmed",
     "a whole squash as bought, peeled: less SR28's 16 % refuse"),
])
def test_cans_and_whole_produce_weighed_as_bought(resolver, line, grams, method, why):
    item = resolver.ingredient(line)
    assert item.grams == pytest.approx(grams), (why, item.grams_method)
    assert (item.grams_method or "").startswith(method), (why, item.grams_method)


@pytest.mark.parametrize(("line", "why"), [
    ("1 package oatmeal cookies", "no standard for a package: it holds anything"),
    ("1 bunch of bananas", "no standard bunch of bananas: a hand holds 5 to 9"),
])
def test_no_standard_weight_stays_unweighed(resolver, line, why):
    item = resolver.ingredient(line)
    assert item.grams is None and "no per-" in (item.problem or ""), (why, item.grams_method)


def test_standard_weight_lookup_order_and_units():
    weights = load_standard_weights()
    assert standard_unit("tins") == "can" and standard_unit(None) == "whole"
    assert standard_unit("Loaves") == "loaf"
    soup = find_standard(weights, "can", "06043", "Soup, cream of mushroom, canned, condensed")
    beans = find_standard(weights, "cans", "16018", "Beans, black turtle, mature seeds, canned")
    assert (soup.grams, beans.grams) == (305.0, 425.0)  # specific entries come first
    assert find_standard(weights, "bunch", "09040", "Bananas, raw") is None
    assert all(weight.source.strip() for weight in weights)


@pytest.mark.parametrize(("text", "field"), [
    ("weights:\n  - {unit: bunch, grams: 0, foods: ['11297'], source: x}\n", "grams"),
    ("weights:\n  - {unit: bunch, grams: 70, source: x}\n", "weights[0]"),
    ("weights:\n  - {unit: bunch, grams: 70, foods: [11297], source: x}\n", "foods"),
    ("weights:\n  - {unit: can, grams: 70, described: '(', source: x}\n", "described"),
    ("weights:\n  - {unit: can, grams: 70, described: 'a'}\n", "weights[0]"),
])
def test_a_bad_standard_weight_names_its_field(tmp_path, text, field):
    path = tmp_path / "standard_weights.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as error:
        load_standard_weights(path)
    assert field in str(error.value) and "standard_weights.yaml" in str(error.value)


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 cup beet greens", "11086", "the leaves of the beet, SR28's beet greens (not beets)"),
    ("1 cup turnip greens", "11568", "turnip greens, not turnips"),
    ("2 cups dandelion greens", "11207", "SR28 has dandelion greens"),
    ("1 cup fresh coriander leaf", "11165", "the singular of the reviewed 'coriander leaves'"),
    # words the parser drops
    ("3 prickly pears", "09287", "the parser keeps 'pears'; SR28's own name holds both words"),
    ("4 ea. (24 ounces) boneless strip steaks, trimmed of excess fat", "23339",
     "the reviewed 'strip steak', spelled with its plural on the line (not generic beef), "
     "trimmed of its fat: SR28 23339, the top loin steak trimmed to 0\" fat"),
    ("4 filet mignons, 1½ in (4 cm) thick", "23342", "the reviewed 'filet mignon', plural"),
    # words before a food that name no other food
    ("113 grams (¼ lb) flour", "20081", "'grams flour' is no 'gram flour' (chickpea flour): "
     "only the name's last word may change its number"),
    ("2 ripe bananas", "09040", "a state before the food names no other food"),
    ("1 cup chopped ham", "10182", "a cut before the food names no other food"),
    ("2 cups green beans", "11052", "the parser's own name, as before"),
])
def test_the_line_names_its_food(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


@pytest.mark.parametrize(("line", "why"), [
    ("2 cups sweet potato greens", "not the sweet potato root (SR28 has leaves, not greens)"),
    ("1 cup radish greens", "not radishes: SR28 has no radish leaves"),
    ("1 cup greens", "greens of no plant are no food (and not green peas)"),
])
def test_a_plant_part_never_reads_as_the_plant(resolver, line, why):
    item = resolver.ingredient(line)
    assert item.ndb_no not in {"11507", "11429", "11304"}, (why, item.sr28_description)


def test_plurals_fold_only_where_one_reviewed_name_has_the_spelling():
    assert stem("leaves") == "leaf" and stem("loaves") == "loaf" and stem("olives") == "olive"
    found = unique_by_stems({"coriander leaves": 1, "green": 2, "greens": 3, "tomato": 4})
    assert found["coriander leaf"] == "coriander leaves"
    assert found["tomato"] == "tomato"
    assert "green" not in found  # "green" and "greens" share a spelling: neither decides


# ------------------------------------------------------------------ proxies


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("4 stock cubes", "06080", 16.0, "a stock cube is dried bouillon, SR28's 4 g cube"),
    ("2 seasoning cubes (preferably Maggi or Knorr brand)", "06080", 8.0,
     "a seasoning cube is a stock cube"),
    ("1 lb ground meat", "23572", 453.592, "an unnamed ground meat is 80 % lean ground beef"),
    ("10 curry leaves", "02004", 2.0, "an aromatic leaf by bay leaf's 0.2 g a leaf"),
    ("4 tablespoons ground crayfish", "35184", None,
     "West African dried ground crayfish is a dried small fish (SR28's dried smelt)"),
    ("200 g stockfish, soaked", "35165", 200.0, "stockfish is dried fish"),
])
def test_standard_proxies_are_marked(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb and item.match_method == "proxy", (why, item.sr28_description)
    assert any(rule.startswith("proxy:") for rule in item.rules), why
    if grams is not None:
        assert item.grams == pytest.approx(grams), (why, item.grams_method)


def test_plain_stock_is_not_a_cube(resolver):
    item = resolver.ingredient("2 cups stock")
    assert item.match_method != "proxy" and item.ndb_no == "06172"


# ------------------------------------------------------------------ oil for frying


def _recipe(resolver, lines):
    return resolver.recipe(RecipeRecord(id="t", title="Fish cakes", ingredients=lines,
                                        instructions=["Fry the cakes."], servings=4))


def test_oil_for_frying_is_left_out_and_a_few_spoons_counted(resolver):
    resolved = _recipe(resolver, ["½ cup (120 ml) vegetable oil (for frying)",
                                  "2 tbsp oil, for frying the onions", "360 g cod", "1 egg"])
    layer, spoons = resolved.ingredients[:2]
    assert resolved.kept
    assert layer.grams == 0.0 and "frying_oil_left_out" in layer.rules
    assert "left out" in layer.grams_method
    assert spoons.grams == pytest.approx(27.2) and "frying_oil_left_out" not in spoons.rules


def test_oil_in_a_recipe_not_for_frying_is_counted(resolver):
    resolved = _recipe(resolver, ["½ cup vegetable oil", "2 cups flour", "2 eggs"])
    assert resolved.ingredients[0].grams == pytest.approx(109.0)


# ------------------------------------------------------------------ states


@pytest.mark.parametrize(("line", "present", "absent", "why"), [
    ("1½ cups dhal or other lentils, cooked but not drained", ["cooked"], ["drained"],
     "the alternative ends at the comma; 'not drained' is no drained state"),
    ("2 cups cooked lentils, not drained", ["cooked"], ["drained"], "a negated state"),
    ("1 cup frozen or fresh peas", ["frozen"], [], "the first food's state"),
    ("1 can tomatoes, drained", ["canned", "drained"], [], "a state said, kept"),
])
def test_a_negated_state_is_not_the_foods(line, present, absent, why):
    states = line_states(line)
    assert all(s in states for s in present), (why, states)
    assert not any(s in states for s in absent), (why, states)


# ------------------------------------------------------------------ freshness


def test_every_standards_file_the_resolver_reads_is_a_build_input(sr28, monkeypatch, tmp_path):
    """A change to any standards file the resolver reads makes a rebuild necessary: each is
    among the build's inputs (their fingerprints decide whether a build is up to date)."""
    from pathlib import Path

    from nutrireason.recipes.build import Resolver, build_inputs
    from nutrireason.standards import standards_dir

    read: set[str] = set()
    original = Path.read_text

    def recording(self, *args, **kwargs):
        if self.parent == standards_dir():
            read.add(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", recording)
    Resolver.from_sr28(sr28)
    monkeypatch.undo()
    inputs = {path.name for path in build_inputs(tmp_path / "corpus.json")}
    assert {"proxies.yaml", "standard_weights.yaml"} <= read
    assert read <= inputs, read - inputs


# ------------------------------------------------------------------ refused names


def test_a_refused_name_is_not_guessed_from_its_words(resolver):
    item = resolver.ingredient("Corn flour")
    assert item.ndb_no is None  # reviewed: corn starch or corn meal, the line does not say


# ------------------------------------------------------------------ sizes of several cans


@pytest.mark.parametrize(("line", "ounces", "why"), [
    ("2 cans (14 ounces) sweetened condensed milk", 28.0,
     "14 oz is a can's net weight, 7 oz is none: two 14 oz cans"),
    ("3 cans (5 oz) tuna, drained", 15.0, "three 5 oz cans of tuna"),
    ("2 cans (30 oz) red kidney beans", 30.0, "30 oz is no can, 15 oz is: the total"),
    ("2 cans (28 oz) crushed tomatoes", 28.0, "28 oz and 14 oz are both cans: the total"),
    ("2 cans (15 oz each) black beans", 30.0, "'each' says so"),
    ("2 (14 oz) cans sweetened condensed milk", 28.0, "a size after the number, per item"),
])
def test_a_mass_after_several_cans(line, ounces, why):
    from nutrireason.recipes.parse import parse_line

    parsed = parse_line(line)
    assert (parsed.quantity, parsed.unit) == (pytest.approx(ounces), "ounce"), why
