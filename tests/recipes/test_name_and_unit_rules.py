"""Name and unit rules, one section per rule, on lines written for the test: spellings and
descriptors the map does not list, a food's pack, glosses that list kinds, a product made of
a food, clauses that name a tool or a cut size, glasses, a food counted in its fresh sense,
dehydrated foods and SR28's newer beef cuts. Each expected SR28 food or weight was looked up
by hand in SR28 (FOOD_DES / WEIGHT) for the reason beside it."""

from __future__ import annotations

import pytest

from nutrireason.recipes.backoff import backoff_names, packless_name, respelled
from nutrireason.recipes.lines import household_measures, set_aside_clauses
from nutrireason.recipes.match import product_of_food
from nutrireason.recipes.parse import parse_line

FL_OZ_WINE = 29.4  # SR28 14096 / 14106 "1 fl oz" rows of table wine, grams


# ---------------------------------------------------------------- spellings and descriptors


@pytest.mark.parametrize(("name", "spelled", "why"), [
    ("tumeric", "turmeric", "a common misspelling"),
    ("shitake mushrooms", "shiitake mushrooms", "SR28 11238 spells 'shiitake'"),
    ("portobello mushroom", "portabella mushroom", "SR28 11265 'Mushrooms, portabella'"),
    ("green chillies", "green chiles", "the map lists 'chiles'"),
    ("lemongrass", "lemon grass", "SR28 11972 'Lemon grass (citronella)'"),
    ("butter", None, "nothing to respell"),
])
def test_a_variant_spelling_is_respelled(name, spelled, why):
    assert respelled(name) == spelled, why


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 tsp tumeric", "02043", 3.0, "SR28 02043 'Spices, turmeric, ground': 1 tsp = 3 g"),
    ("1 cup unflavored yogurt", "01116", 245.0,
     "a descriptor: SR28 01116 plain whole-milk yogurt, 1 cup (8 fl oz) = 245 g"),
    ("4 tbsp (60 g) refined sugar", "19335", 60.0, "refined sugar is sugar (19335), 60 g stated"),
    ("1 large portobello mushroom cap", "11265", 84.0,
     "the cap is the form, portobello the spelling: SR28 11265 '1 piece whole' = 84 g"),
    ("½ leek stem, chopped", "11246", 44.5, "SR28 11246 leeks: '1 leek' = 89 g, half of it"),
])
def test_a_name_with_a_word_the_map_lacks(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


def test_a_spelling_variant_is_never_tried_first(resolver):
    # "chilli powder" is a reviewed name (02031, ground chile); "chili powder" another
    # (02009, the US blend): the variant is only for a name that finds nothing
    assert resolver.ingredient("1 tsp chilli powder").ndb_no == "02031"
    assert resolver.ingredient("1 tsp chili powder").ndb_no == "02009"


@pytest.mark.parametrize(("name", "line", "expected", "why"), [
    ("pimentostuffed olives", "¼ cup pimento-stuffed olives", "olives", "a filling is no food"),
    ("water tuna", "1 can water-packed tuna", "tuna water",
     "a pack before the food is put after it, as the map lists 'tuna water'"),
    ("seedless raisins", "1 cup seedless raisins", "raisins", "a descriptor"),
])
def test_a_filling_a_pack_or_a_descriptor_leaves_the_name(name, line, expected, why):
    assert expected in backoff_names(name, line), why


# ------------------------------------------------------------------------------ the pack


@pytest.mark.parametrize(("name", "line", "expected"), [
    ("tuna olive oil", "1 tin good tuna in olive oil", "tuna"),
    ("sardines tomato sauce", "1 can sardines in tomato sauce", "sardines"),
    ("tuna", "1 can tuna", None),
    ("oil", "1 cup oil in a jar", None),
])
def test_the_name_before_its_pack(name, line, expected):
    assert packless_name(name, line) == expected


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 tin (200 grams) good quality tuna in olive oil", "15124",
     "tuna canned in oil (SR28 15124), not 200 g of olive oil"),
    ("1 can (6 oz / 170 g) chunk tuna in water", "15121",
     "the map's 'tuna water' still holds: SR28 15121 light tuna canned in water"),
    ("2 cans sardines in oil", "15088", "SR28 15088 sardines canned in oil, not sardine oil"),
    ("3 tsp crispy chilli in oil", "04044",
     "a food that is nothing without its pack stays as found (the oil)"),
])
def test_a_food_in_its_pack_is_the_food(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


# ------------------------------------------------------------------- glosses that list kinds


def test_a_gloss_listing_kinds_names_the_kind_with_the_food():
    line = "1 tin (400 g) beans (kidney, soya, black eye, chickpea)"
    assert backoff_names("beans", line)[:2] == ["kidney beans", "kidney"]


@pytest.mark.parametrize(("name", "line", "first", "why"), [
    ("guinea corn", "2 cups guinea corn (sorghum)", "sorghum", "one name: the other name"),
    ("stock", "1 stock cube (Maggi or Knorr)", "maggi", "capitalised: brands, not kinds"),
    ("dried onion", "1 tbsp dehydrated onion (minced or powdered)", None,
     "a gloss of cuts and forms names no food"),
])
def test_a_gloss_that_lists_no_kinds(name, line, first, why):
    names = backoff_names(name, line)
    assert (names[0] if names else None) == first, why


def test_beans_glossed_with_kidney_are_kidney_beans(resolver):
    item = resolver.ingredient("1 package (16 oz) dry beans (kidney or black beans preferred)")
    assert item.ndb_no == "16032", "SR28 16032 kidney beans, mature seeds, raw: not lamb kidney"


# ------------------------------------------------------------- a product made of the food


@pytest.mark.parametrize(("query", "description", "product"), [
    ("sardines", "fish oil, sardine", True),
    ("peanuts", "peanut butter, smooth style, with salt", True),
    ("peanut butter", "peanut butter, smooth style, with salt", False),
    ("sardines", "fish, sardine, atlantic, canned in oil, drained solids with bone", False),
    ("chicken stock", "soup, chicken broth, ready-to-serve", False),
])
def test_a_product_made_of_the_food(query, description, product):
    assert product_of_food(query, description) is product


# ---------------------------------------------------------------------- tools and cut sizes


@pytest.mark.parametrize(("text", "main"), [
    ("1 medium onion, grated on the large side of a box grater", "1 medium onion, grated"),
    ("2 carrots, grated using a food processor", "2 carrots, grated"),
    ("1 cucumber, chopped in 1 cm cubes", "1 cucumber"),
    ("3 potatoes, cut in small cubes", "3 potatoes"),
])
def test_a_tool_or_a_cut_size_is_set_aside(text, main):
    assert set_aside_clauses(text)[0] == main


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 cucumber, chopped in 1 cm cubes", "11205", 301.0,
     "the cubes are the cut, not the unit: SR28 11205 '1 cucumber (8-1/4\")' = 301 g"),
    ("1 medium onion, grated on the large side of a box grater", "11282", 110.0,
     "the box is the grater's: SR28 11282 '1 medium' = 110 g"),
    ("¼ onion, cut in large pieces", "11282", 27.5,
     "the pieces' size is not the onion's: a quarter of the medium 110 g"),
])
def test_the_cut_leaves_the_count(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


# ---------------------------------------------------------------------------------- glasses


@pytest.mark.parametrize(("text", "measure"), [
    ("1 glass of milk", "1 cup milk"),
    ("2 glasses red wine", "10 fl oz red wine"),
    ("1 glass of port", "3.5 fl oz port"),
])
def test_a_glass_is_a_measure(text, measure):
    assert household_measures(text) == measure


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("½ glass of milk", "01077", 122.0, "half a cup of whole milk: SR28 1 cup = 244 g"),
    ("2 glasses red wine", "14096", 10 * FL_OZ_WINE, "two 5 fl oz servings of table wine"),
    ("1 glass of warm water", "14411", 236.8, "a cup of water: SR28 14411 1 fl oz = 29.6 g"),
])
def test_a_glass_is_weighed(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


# -------------------------------------------------------------- a food counted, not spooned


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 red pepper, chopped", "11821", 119.0,
     "counted: the vegetable, SR28 11821 '1 medium' = 119 g"),
    ("1 large red pepper", "11821", 164.0, "SR28 11821 '1 large' = 164 g"),
    ("½ tsp red pepper", "02031", 0.9, "spooned: cayenne, SR28 02031 1 tsp = 1.8 g"),
    ("1 bunch of coriander", "11165", 70.0,
     "counted: the leaves (11165), a bunch of a soft herb at its standard 70 g"),
    ("1 tsp coriander", "02013", 1.8, "spooned: the seed, SR28 02013 1 tsp = 1.8 g"),
    ("1 medium red pepper, chopped (~1 cup)", "11821", 149.0,
     "counted, then measured: the vegetable, SR28 11821 '1 cup, chopped' = 149 g (not 86 g "
     "of cayenne)"),
    ("½ cup red pepper, diced", "11821", 74.5, "diced: the vegetable, half of 149 g"),
    ("1 tbsp crushed red pepper", "02031", 5.3, "crushed: cayenne, SR28 02031 1 tbsp = 5.3 g"),
])
def test_a_counted_food_is_the_fresh_plant(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


# ------------------------------------------------------------------------ dehydrated foods


def test_dehydrated_is_the_dried_state():
    assert "dried" in parse_line("3 tbsp dehydrated lemon peel").states


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 tablespoon dehydrated onion (minced or powdered)", "11284", 5.0,
     "SR28 11284 'Onions, dehydrated flakes': 1 tbsp = 5 g (not raw onion)"),
    ("3 tbsp dehydrated lemon peel", None, None,
     "SR28 has lemon peel only raw: a dried peel is not weighed as the raw one"),
])
def test_a_dehydrated_food(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, grams), why


# ---------------------------------------------------------------------- newer beef entries


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("2 New York strip steaks", "23388", 2 * 302.0,
     "'strip' names the cut, not the unit: SR28 23388 top loin steak, '1 steak' = 302 g"),
    ("1 beef tenderloin roast", "23336", 644.0,
     "SR28 23336 'Beef, loin, tenderloin roast, boneless': '1 roast' = 644 g"),
    ("2 pounds beef chuck roast", "23102", 2 * 453.592,
     "SR28 23102, the chuck pot roast in the newer boneless retail data"),
    ("1 pound filet mignon", "23342", 453.592, "SR28 23342, the tenderloin steak at 0\" trim"),
])
def test_a_beef_cut_is_its_newer_entry(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


def test_strips_of_bacon_stay_strips():
    assert parse_line("4 strips bacon").unit == "strip"


# ------------------------------------------------------------- a cut of the food's category


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("½ cup grated Pecorino Romano cheese", 48.5,
     "SR28 01038 romano has no cup: a grated cheese's cup, 01227 queso seco '1 cup grated' "
     "= 97 g (not ingredient-slicer's generic 196 g)"),
    ("1 cup shredded gouda", 113.0,
     "SR28 01022 gouda has no cup: a shredded cheese's cup, 01005 brick '1 cup, shredded' "
     "= 113 g"),
])
def test_a_cut_of_a_food_without_a_cup_weighs_as_its_category(resolver, line, grams, why):
    item = resolver.ingredient(line)
    assert item.grams == pytest.approx(grams, abs=0.01), why
    assert "the same cut" in (item.grams_method or ""), why


# ------------------------------------------------------------ a synonym in SR28's own name


def test_a_name_sr28_gives_in_parentheses_is_the_food(resolver):
    # SR28 05160 "Squab, (pigeon), meat and skin, raw": 1 squab = 199 g of meat and skin
    item = resolver.ingredient("4 whole pigeons, cleaned and gutted")
    assert (item.ndb_no, item.grams) == ("05160", pytest.approx(4 * 199.0))


def test_pigeon_peas_stay_peas(resolver):
    assert resolver.ingredient("1 cup pigeon peas").ndb_no == "16101"


# ------------------------------------------------------------------ slices of a thickness


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("4 ea. ½-inch thick fresh pineapple slices", 4 * 56.0,
     "SR28 09266 'slice, thin (3-1/2\" dia x 1/2\" thick)' = 56 g, the stated thickness"),
    ("4 pineapple slices", 4 * 166.0, "no thickness: SR28's first slice, 166 g"),
    ("2 medium red bell peppers, cut into ½-inch thick wedges", 2 * 119.0,
     "whole peppers are counted, not slices: SR28 11821 '1 medium' = 119 g"),
])
def test_a_stated_thickness_picks_the_slice(resolver, line, grams, why):
    assert resolver.ingredient(line).grams == pytest.approx(grams), why


# ---------------------------------------------------------------- the article as an amount


@pytest.mark.parametrize(("line", "quantity", "unit"), [
    ("A couple of spoonfuls chopped walnuts", 2.0, "tablespoon"),
    ("A pinch of ground black pepper", 0.0625, "teaspoon"),
    ("A large loaf of crusty bread", 1.0, "loaf"),
    ("A few sprigs of parsley", None, "sprig"),
    ("A little salt", None, None),
    ("A splash of milk", None, None),
])
def test_a_or_a_couple_before_a_unit_is_the_amount(line, quantity, unit):
    parsed = parse_line(line)
    assert (parsed.quantity, parsed.unit) == (quantity, unit)


# --------------------------------------------------------------- a part of a fruit alone


@pytest.mark.parametrize(("name", "line", "expected"), [
    ("peel clementine oranges", "Peel from 3 clementine oranges (such as mandarins)",
     ["clementine peel", "orange peel"]),
    ("peel lemon orange", "Grated peel of 1 lemon and 1 orange", ["lemon peel", "orange peel"]),
])
def test_a_part_of_a_fruit_keeps_the_part(name, line, expected):
    names = backoff_names(name, line)
    assert names == expected, "never the whole fruit (mandarins)"


# ---------------------------------------------------- a mass that restates the volume


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("1.36 kg (48 oz / 6 cups) all-purpose flour", 6 * 125.0,
     "1.36 kg is 48 fl oz written as ounces of weight: SR28 20081 1 cup = 125 g"),
    ("250 g (1 cup) plain yogurt", 250.0, "SR28 01116's cup is 245 g: the mass is believed"),
    ("200 g (1 cup) sugar", 200.0, "200 g is no restated 237 ml"),
])
def test_a_mass_that_restates_the_volume(resolver, line, grams, why):
    assert resolver.ingredient(line).grams == pytest.approx(grams), why


# --------------------------------------------------------------------------- animal fats


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("3 oz lamb or other solid and flavorful fat, chopped", "17005",
     "the lamb names the fat: SR28 17005 lamb separable fat, not lamb meat"),
    ("100 g pork fat", "10006", "SR28 10006 'Pork, fresh, separable fat, raw'"),
    ("2 tbsp goose fat", "04576", "SR28 04576 'Fat, goose'"),
    ("2 tbsp vegetable oil or other fat", "04044", "a plant oil stays the first food"),
])
def test_an_animal_fat_is_the_fat(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


def test_a_relative_clause_names_no_food():
    text = "800 g beef or lamb which has some fat"
    assert set_aside_clauses(text) == ("800 g beef or lamb", ["which has some fat"])
