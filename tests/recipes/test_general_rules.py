"""General reading rules, one section per rule, on lines written for the test: fruit spreads
named by their flavour, grinding said of the food, qualifier words, powdered foods, counted
nuts, counted roasts, racks of ribs, drained canned beans, national dressings, "center cut",
cited proxies and hamburger patties. Each expected SR28 food or weight was looked up by hand in
SR28 (FOOD_DES / WEIGHT / NUT_DATA) for the reason beside it."""

from __future__ import annotations

import pytest

from nutrireason.recipes.backoff import backoff_names, powder_form
from nutrireason.recipes.grams import Portion, counted_in_mass, whole_item
from nutrireason.recipes.parse import parse_line
from nutrireason.recipes.state import grinds_the_food

OZ = 28.349523125  # grams in an avoirdupois ounce
LB = 453.59237  # grams in a pound
SR28_OZ = 28.35  # SR28 WEIGHT's "1 oz" rows


# ------------------------------------------------------------------ fruit spreads by flavour


@pytest.mark.parametrize(("line", "food", "why"), [
    ("¾ cup apple jelly", "apple jelly", "jelly is put back after the food, not a prep word"),
    ("2 tbsp fig jam", "fig jam", "jam is the food, not a form of figs"),
    ("1/4 cup lime marmalade", "lime marmalade", "marmalade is the food"),
    ("3 tbsp apricot preserves", "apricot preserves", "preserves is the food"),
])
def test_the_spread_word_stays_on_the_name(line, food, why):
    assert parse_line(line).food == food, why


@pytest.mark.parametrize(("name", "first", "why"), [
    ("apple jelly", "fruit jelly", "SR28 has one jelly entry, 19300 'Jellies'"),
    ("fig jam", "fruit jam", "SR28 has one jam entry, 19297 'Jams and preserves'"),
    ("lime marmalade", "marmalade", "SR28 has only 19303 'Marmalade, orange'"),
])
def test_a_flavoured_spread_backs_off_to_the_plain_spread(name, first, why):
    assert backoff_names(name, f"1 cup {name}")[0] == first, why


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("¾ cup apple jelly", "19300", 12 * 21.0, "SR28 19300 'Jellies' (not apples 09003); its only "
     "volume row 'serving 1 tbsp' 21 g: 12 tbsp"),
    ("2 tbsp red currant jelly", "19300", 2 * 21.0, "19300 'Jellies', 21 g a tbsp"),
    ("1/4 cup quince jelly", "19300", 4 * 21.0, "19300 'Jellies': 4 tbsp of 21 g"),
    ("2 tbsp fig jam", "19297", 2 * 20.0, "SR28 19297 'Jams and preserves', 'tbsp' 20 g"),
    ("2 tbsp blackberry jam", "19297", 2 * 20.0, "19297, 20 g a tbsp"),
    ("1/4 cup peach preserves", "19297", 4 * 20.0, "preserves are 19297 'Jams and preserves'"),
    ("1/4 cup lime marmalade", "19303", 320.0 / 4, "SR28's only marmalade is 19303 'Marmalade, "
     "orange'; its 'cup' row 320 g"),
    ("2 tbsp ginger marmalade", "19303", 2 * 20.0, "19303, 'tbsp' 20 g"),
    ("1 cup apples", "09003", 109.0, "no spread word: the fruit itself, 09003 'Apples, raw, with "
     "skin', 'cup slices' 109 g"),
])
def test_a_fruit_spread_named_by_its_flavour_is_the_spread(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams, rel=1e-3), why


@pytest.mark.parametrize(("line", "grams"), [
    ("2 tbsp mint jelly", 42.0),  # an herb's jelly is a jelly, not the herb: 2 x 21 g
    ("1/4 cup hot pepper jelly", 84.0),  # a quarter cup is 4 tbsp: 4 x 21 g
])
def test_a_herb_or_pepper_flavoured_jelly_is_still_a_jelly(resolver, line, grams):
    item = resolver.ingredient(line)
    assert item.ndb_no == "19300"  # SR28 'Jellies', "serving 1 tbsp" = 21 g
    assert item.grams == pytest.approx(grams)


# ------------------------------------------------------------------ grinding said of the food


@pytest.mark.parametrize(("line", "grinds"), [
    ("1 lb ground veal", True),
    ("¾ lb veal, finely minced", True),
    ("1 lb minced lamb", True),
    ("1 lb beef, minced", True),
    ("1½ lb (680 g) ground beef", True),
    ("1 lb beef with ground pepper", False),
    ("2 lb beef, seasoned with ground cumin", False),
    ("1 lb lamb with minced garlic", False),
    ("1 lb beef", False),
])
def test_grinds_the_food(line, grinds):
    assert grinds_the_food(line) is grinds


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 lb ground veal", "17142", LB, "SR28 17142 'Veal, ground, raw', not the composite of "
     "retail cuts 17088"),
    ("¾ lb veal, finely minced", "17142", 0.75 * LB, "minced after the comma grinds the veal"),
    ("1 lb minced veal", "17142", LB, "minced before the name: 17142"),
    ("1 lb minced lamb", "17224", LB, "SR28 17224 'Lamb, ground, raw', not the composite 17001"),
    ("2 lb lamb, minced", "17224", 2 * LB, "17224 'Lamb, ground, raw'"),
    ("1 lb pork, minced", "10219", LB, "SR28 10219 'Pork, fresh, ground, raw', not the "
     "composite 10187"),
    ("1 lb beef, minced", "23572", LB, "SR28 23572 'Beef, ground, 80% lean meat / 20% fat, "
     "raw', the standard ground beef, not the composite 13795"),
    ("500 g lean minced beef", "23562", 500.0, "lean ground beef: SR28 23562 'Beef, ground, 90% "
     "lean meat / 10% fat, raw'"),
    ("1½ lb (680 g) ground beef", "23572", 680.0, "23572; the parenthesised 680 g is 1½ lb"),
])
def test_a_ground_meat_is_the_ground_entry(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams, rel=1e-3), why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 lb beef with ground pepper", "13795", "the pepper is ground, not the beef: SR28 13795 "
     "'Beef, composite of trimmed retail cuts, ... trimmed to 1/8\" fat, all grades, raw'"),
    ("2 lb beef, seasoned with ground cumin", "13795", "the cumin is ground: 13795"),
    ("1 lb lamb with minced garlic", "17001", "the garlic is minced: SR28 17001 'Lamb, domestic, "
     "composite of trimmed retail cuts, ... raw'"),
    ("1 lb veal", "17088", "no grinding word: SR28 17088 'Veal, composite of trimmed retail "
     "cuts, separable lean and fat, raw'"),
])
def test_a_grinding_word_of_a_spice_leaves_the_meat(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


def test_a_named_cut_minced_stays_the_cut(resolver):
    item = resolver.ingredient("1 lb chicken breast, minced")
    # SR28 has 05332 'Chicken, ground, raw'; the line names the breast, so a breast entry
    # (05062 'Chicken, broiler or fryers, breast, skinless, boneless, meat only, raw')
    assert item.ndb_no != "05332"
    assert "breast" in (item.sr28_description or "").lower()


# ------------------------------------------------------------------ qualifier words off the name


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 cup part skim ricotta", "01037", "SR28 01037 'Cheese, ricotta, part skim milk'"),
    ("1 cup nonfat ricotta", "01037", "SR28 has no nonfat ricotta; its leaner of the two is "
     "01037 part skim"),
    ("1 cup low-fat ricotta", "01037", "low fat: the part skim one, 01037"),
    ("1 cup skim ricotta", "01037", "skim: 01037 part skim milk"),
    ("1 cup ricotta", "01036", "unqualified: SR28 01036 'Cheese, ricotta, whole milk'"),
    ("1 cup whole milk ricotta", "01036", "the line says whole milk: 01036"),
])
def test_qualifier_words_choose_the_entry(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


# ------------------------------------------------------------------ powdered foods


@pytest.mark.parametrize(("name", "expected"), [
    ("powdered milk", "milk powder"),
    ("powdered ginger", "ginger powder"),
    ("powdered garlic", "garlic powder"),
    ("milk", "milk"),
    ("garlic powder", "garlic powder"),
])
def test_powder_form(name, expected):
    assert powder_form(name) == expected


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("½ cup powdered milk", "01091", 60.0, "SR28 01091 'Milk, dry, nonfat, regular, ...': "
     "'cup' 120 g (and '0.25 cup' 30 g)"),
    ("1 tbsp powdered ginger", "02021", 5.2, "SR28 02021 'Spices, ginger, ground', 'tbsp' 5.2 g"),
    ("1/2 tsp powdered garlic", "02020", 3.1 / 2, "SR28 02020 'Spices, garlic powder', 'tsp' "
     "3.1 g (not 11215 'Garlic, raw')"),
    ("1 tsp powdered onion", "02026", 2.4, "SR28 02026 'Spices, onion powder', 'tsp' 2.4 g"),
    ("1 teaspoon powdered cumin", "02014", None, "SR28's only cumin is 02014 'Spices, cumin "
     "seed'"),
    ("1 cup powdered sugar", "19336", 120.0, "powdered sugar is its own food: SR28 19336 "
     "'Sugars, powdered', 'cup unsifted' 120 g"),
])
def test_a_powdered_food_is_its_powder(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    if grams is not None:
        assert item.grams == pytest.approx(grams, rel=1e-3), why


# ------------------------------------------------------------------ counted nuts


def test_counted_in_mass_gives_the_nut_then_the_half():
    portions = counted_in_mass(Portion(1.0, "oz (19 halves)", 28.35, "ounce"))
    assert len(portions) == 2
    nut, half = portions
    assert nut.grams / nut.amount == pytest.approx(2 * 28.35 / 19)  # a nut is two halves
    assert half.grams / half.amount == pytest.approx(28.35 / 19)
    assert "nut" in nut.measure and "halves" in half.measure


def test_counted_in_mass_takes_the_first_number_of_a_range():
    (kernel,) = counted_in_mass(Portion(1.0, "oz (10-12 kernels)", 28.35, "ounce"))
    assert kernel.grams / kernel.amount == pytest.approx(28.35 / 10)


@pytest.mark.parametrize("portion", [
    Portion(1.0, "cup, chopped", 109.0, "cup"),
    Portion(1.0, "oz", 28.35, "ounce"),
])
def test_counted_in_mass_needs_an_ounce_that_counts(portion):
    assert counted_in_mass(portion) == []


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("24 pecan halves", "12142", 24 * SR28_OZ / 19, "SR28 12142 'Nuts, pecans': 'oz (19 halves)'"),
    ("3 walnuts", "12155", 3 * 2 * SR28_OZ / 14, "SR28 12155 'Nuts, walnuts, english': 'oz (14 "
     "halves)', a nut is two halves (its 'in shell, edible yield (7 nuts)' 28 g agrees)"),
    ("8 walnut halves", "12155", 8 * SR28_OZ / 14, "12155 'oz (14 halves)'"),
    ("6 macadamia nuts", "12131", 6 * SR28_OZ / 10, "SR28 12131 'Nuts, macadamia nuts, raw': "
     "'oz (10-12 kernels)', the first number"),
    ("12 cashews", "12087", 12 * SR28_OZ / 18, "SR28 12087 'Nuts, cashew nuts, raw' has only "
     "'oz'; its relative 12086 (oil roasted) has 'oz (18 kernels)'"),
    ("1 cup pecan halves", "12142", 99.0, "a measure, not a count: 12142 'cup, halves' 99 g"),
])
def test_counted_nuts_are_weighed_by_the_ounce_that_counts_them(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams, rel=1e-3), why


# ------------------------------------------------------------------ counted roasts


@pytest.mark.parametrize(("line", "whole"), [
    ("1 beef tenderloin roast", "roast"),
    ("1 ham", "ham"),
    ("2 beef tenderloin steaks", None),
    ("1 lb beef tenderloin", None),
])
def test_whole_item(line, whole):
    assert whole_item(parse_line(line)) == whole


def test_a_counted_roast_is_never_a_steak(resolver):
    item = resolver.ingredient("1 beef tenderloin roast")
    # SR28's raw tenderloin is 13917 '... tenderloin, steak, ...', '1 steak' 164 g: no roast
    assert item.grams is None or item.grams != pytest.approx(164.0), item.grams_method


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 boneless pork loin roast", "10224", 2195.0, "SR28 10224 'Pork, fresh, loin, top loin "
     "(roasts), boneless, separable lean and fat, raw': '1 roast' 2195 g"),
    ("2 beef tenderloin steaks", "23342", 2 * 170.0, "a counted steak is the steak: SR28 23342 "
     "'Beef, loin, tenderloin steak, boneless, ... raw', '1 steak' 170 g"),
])
def test_a_counted_piece_is_its_own_portion(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams), why


# ------------------------------------------------------------------ racks of ribs

# SR28's refuse: 10088 'Pork, fresh, spareribs, ...' Bone 30 %; 10192 'Pork, fresh, backribs,
# ...' 37 %, of which bone 30 % (connective tissue 7 %): the bone leaves 0.70 of the weight.


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 slab pork spareribs", "10088", 1361 * 0.70, "a slab is a rack: 3 lb (1361 g) as bought, "
     "less SR28 10088's 30 % bone"),
    ("1 rack pork spareribs", "10088", 1361 * 0.70, "the same rack"),
    ("3 lb pork spareribs", "10088", 3 * LB * 0.70, "by mass, less 10088's 30 % bone"),
    ("1 rack of baby back ribs", "10192", 1071 * 0.70, "SR28 10980 'Pork loin, fresh, "
     "backribs, bone-in, raw' '1 ribs' 1071 g, less the 30 % bone of 10192"),
    ("2 racks baby back ribs", "10192", 2 * 1071 * 0.70, "two racks of 1071 g"),
    ("2 lbs baby back ribs", "10192", 2 * LB * 0.70, "by mass, less 10192's 30 % bone"),
])
def test_a_rack_of_ribs_is_weighed_as_bought_less_the_bone(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams, rel=1e-3), why


# ------------------------------------------------------------------ drained canned beans

# 0.57: SR28 chickpeas, canned, '1 can (total can contents)' 448 g (16058) against '1 can
# drained' 253 g (16358) = 0.565.
DRAINED = 0.57


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1 can (12 oz) black beans, rinsed and drained", "16317", 12 * OZ * DRAINED, "SR28 has no "
     "drained black beans: the solids are 16317 'Beans, black turtle, mature seeds, cooked, "
     "boiled, with salt' (130 kcal/100 g, by drained kidney beans' 124)"),
    ("1 can (15 oz) black beans", "16018", 15 * OZ, "undrained: 16018 'Beans, black turtle, "
     "mature seeds, canned', the whole can"),
    ("2 tins of mixed beans, drained", None, 2 * 436 * DRAINED, "SR28's can of beans in liquid "
     "is 436 g (16034 'Beans, kidney, red, ..., canned, solids and liquids', '1 can')"),
])
def test_drained_canned_beans_without_a_drained_entry_are_cooked(resolver, line, ndb, grams,
                                                                 why):
    item = resolver.ingredient(line)
    if ndb is not None:
        assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams, rel=1e-3), why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 can (15 oz) red kidney beans, drained", "16145", "SR28's own 16145 'Beans, kidney, red, "
     "mature seeds, canned, drained solids'"),
    ("1 can (15 oz) chickpeas, drained", "16358", "SR28's own 16358 'Chickpeas ..., canned, "
     "drained solids'"),
    ("1 can (15 oz) pinto beans, drained", "16146", "SR28's own 16146 'Beans, pinto, canned, "
     "drained solids'"),
])
def test_a_drained_entry_is_kept(resolver, line, ndb, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert "drained_beans_as_cooked" not in item.rules, why


def test_drained_solids_are_not_drained_again(resolver):
    item = resolver.ingredient("1 can tuna, drained")
    # SR28 15126 'Fish, tuna, white, canned in water, drained solids': '1 can' 172 g, already
    # the drained solids (not x0.88 again)
    assert "drained solids" in (item.sr28_description or "")
    assert item.grams == pytest.approx(172.0), item.grams_method


# ------------------------------------------------------------------ national dressings


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("1/4 cup French dressing", "04120", 250.0 / 4, "SR28 04120 'Salad dressing, french "
     "dressing, commercial, regular', 'cup' 250 g"),
    ("½ cup Italian salad dressing", "04114", 235.0 / 2, "SR28 04114 'Salad dressing, italian "
     "dressing, commercial, regular', 'cup' 235 g"),
    ("½ cup fat-free Italian salad dressing", "04636", 231.0 / 2, "SR28 04636 'Salad dressing, "
     "italian dressing, fat-free', 'cup' 231 g"),
    ("2 tbsp Russian dressing", "04015", 2 * 15.0, "SR28 04015 'Salad dressing, russian "
     "dressing', 'tbsp' 15 g"),
])
def test_a_national_word_names_a_dressing(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams, rel=1e-3), why


def test_a_national_word_without_dressing_is_no_dressing(resolver):
    item = resolver.ingredient("1 tsp Italian seasoning")
    assert not (item.sr28_description or "").startswith("Salad dressing")


# ------------------------------------------------------------------ "center cut" is a label


@pytest.mark.parametrize(("labelled", "plain"), [
    ("2 lb center cut pork loin", "2 lb pork loin"),
    ("4 center-cut pork chops", "4 pork chops"),
    ("1 lb center cut bacon", "1 lb bacon"),
])
def test_center_cut_is_a_label(resolver, labelled, plain):
    one, other = resolver.ingredient(labelled), resolver.ingredient(plain)
    assert one.ndb_no is not None
    assert one.ndb_no == other.ndb_no
    assert one.grams == pytest.approx(other.grams)


# ------------------------------------------------------------------ cited proxies


@pytest.mark.parametrize(("line", "proxy", "ndb", "why"), [
    ("1 cup halloumi", "halloumi", "01026", "SR28 has no halloumi: the stretched-curd 01026 "
     "'Cheese, mozzarella, whole milk' (300 kcal, 22 g protein, 22 g fat per 100 g)"),
    ("12 oz kashkaval", "kashkaval", "01035", "no kashkaval: the firm yellow 01035 'Cheese, "
     "provolone'"),
    ("1 cup labneh", "labneh", "01031", "no labneh: the soft fresh spread 01031 'Cheese, "
     "neufchatel'"),
    ("2 tbsp red curry paste", "red curry paste", "06631", "no curry paste: the chili-garlic "
     "paste 06631 'Sauce, hot chile, sriracha'"),
    ("1 tbsp harissa", "harissa", "06631", "a chili paste: 06631 sriracha"),
    ("1/2 cup pomegranate molasses", "pomegranate molasses", "19304", "a fruit syrup: 19304 "
     "'Molasses'"),
    ("2 tbsp lemon pepper", "lemon pepper", "02030", "mostly black pepper: 02030 'Spices, "
     "pepper, black'"),
    ("¼ cup pitted Kalamata olives", "kalamata olives", "09193", "no Kalamata: 09193 'Olives, "
     "ripe, canned (small-extra large)'"),
    ("1 cup dried beans", "dried beans", "16027", "unnamed dry beans: 16027 'Beans, kidney, all "
     "types, mature seeds, raw'"),
    ("2 cups cooked beans", "beans", "16028", "the proxy's cooked sibling: 16028 'Beans, kidney, "
     "all types, mature seeds, cooked, boiled, without salt'"),
    ("1 pinch asafoetida", "asafoetida", "02015", "no asafoetida: a ground seasoning, 02015 "
     "'Spices, curry powder'"),
    ("1 cup mango chutney", "mango chutney", "19297", "no chutney in SR28: fruit cooked with "
     "sugar, 19297 'Jams and preserves'"),
    ("1 tbsp Cajun seasoning", "cajun seasoning", "02015", "a blend of ground spices: 02015 "
     "'Spices, curry powder'"),
    ("2 tbsp Old Bay seasoning", "* seasoning", "02015", "any seasoning the map does not list "
     "is a spice blend: 02015"),
    ("2 tablespoons berbere spice blend", "berbere spice", "02015", "berbere is a spice blend"),
    ("1 tbsp seasoned salt", "seasoned salt", "02047", "mostly salt: 02047 'Salt, table'"),
    ("½ tsp orange blossom water", "orange blossom water", "14411", "a distillate with no "
     "energy: 14411 'Beverages, water, tap, drinking'"),
    ("¼ cup mirin", "mirin", "14057", "a sweet rice wine: 14057 'Alcoholic beverage, wine, "
     "dessert, sweet'"),
    ("1 tsp black cumin", "black cumin", "02014", "nigella seed: 02014 'Spices, cumin seed'"),
    ("1 tsp almond extract", "almond extract", "02050", "a flavour extract: 02050 'Vanilla "
     "extract'"),
    ("3 Tbsp nutritional yeast flakes", "nutritional yeast flakes", "18375", "dried yeast: 18375 "
     "'Leavening agents, yeast, baker's, active dry'"),
])
def test_a_cited_proxy(resolver, line, proxy, ndb, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert f"proxy:{proxy}" in item.rules, item.rules
    assert (item.match_method or "").startswith("proxy"), item.match_method


def test_a_herb_chutney_is_no_fruit_spread(resolver):
    # coriander chutney is ground fresh herbs, not sweet: it is not read as jam
    assert resolver.ingredient("3 tbsp coriander chutney").ndb_no != "19297"


def test_a_proxy_pepper_is_weighed_as_the_pepper(resolver):
    item = resolver.ingredient("2 poblano peppers")
    # no poblano in SR28: 11333 'Peppers, sweet, green, raw', '1 medium ...' 119 g
    assert item.ndb_no == "11333"
    assert "proxy:poblano peppers" in item.rules
    assert item.match_method == "proxy"
    assert item.grams == pytest.approx(2 * 119.0)


def test_green_beans_are_not_the_beans_proxy(resolver):
    item = resolver.ingredient("1 lb green beans")
    assert item.ndb_no == "11052"  # SR28 'Beans, snap, green, raw'
    assert not any(rule.startswith("proxy:") for rule in item.rules)


# ------------------------------------------------------------------ hamburger patties


@pytest.mark.parametrize(("line", "count"), [
    ("4 beef patties", 4),
    ("2 hamburger patties", 2),
    ("6 burger patties", 6),
])
def test_a_patty_is_a_quarter_pound_of_ground_beef(resolver, line, count):
    item = resolver.ingredient(line)
    # SR28 23572 'Beef, ground, 80% lean meat / 20% fat, raw', '4 oz' row (113 g): a raw
    # quarter-pound patty, 113.4 g
    assert item.ndb_no == "23572"
    assert item.grams == pytest.approx(count * LB / 4, rel=1e-3)


def test_ground_beef_by_mass_is_no_patty(resolver):
    assert resolver.ingredient("1 lb ground beef").grams == pytest.approx(LB, rel=1e-3)


# ------------------------------------------------------------------ slices SR28 does not weigh


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("6 thin slices Brie cheese, rind removed", "01006", 6 * 28.0, "SR28 gives brie no slice; "
     "its sliced cheeses are 'slice (1 oz)' = 28 g each"),
    ("1 slice of queso fresco", "01228", 28.0, "queso fresco has only a crumbled cup"),
    ("4 slices cheddar", "01009", 4 * 28.0, "cheddar's own 'slice (1 oz)' row, as before"),
    ("24 slices pepperoni", "07057", 24 * 2.0, "SR28's sliced pepperoni: '1 piece' (a slice) "
     "= 2.0 g"),
])
def test_a_slice_sr28_does_not_weigh_is_its_kind_slice(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert item.grams == pytest.approx(grams), why


def test_a_slice_of_bread_keeps_its_own_weight(resolver):
    item = resolver.ingredient("2 slices white bread")
    assert item.grams_method.startswith("sr28_weight"), "bread's own slice row, not 28 g"



# ------------------------------------------------------------------ the pack, the skin, a bun


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("½ pound (225 g) green olives packed in brine, pitted", "09195", "the brine is the pack: "
     "09195 'Olives, pickled, canned or bottled, green'"),
    ("4 wild salmon fillets with skin (680 g)", "15076", "the skin stays on: 15076 'Fish, "
     "salmon, Atlantic, wild, raw'"),
    ("1 Kaiser bun, sliced in half", "18353", "a bun is a roll: 18353 'Rolls, hard (includes "
     "kaiser)'"),
    ("½ cup pea pods", "11300", "pea pods are SR28's 11300 'Peas, edible-podded, raw'"),
    ("¾ cup mango juice", "09436", "no mango juice: SR28's 09436 'Mango nectar, canned' "
     "(a cited proxy)"),
])
def test_the_pack_the_skin_and_a_bun_leave_the_food(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


def test_a_pack_the_line_names_still_chooses_the_entry(resolver):
    # "in water" leaves the name but still chooses SR28's water-packed tuna
    item = resolver.ingredient("1 can tuna in water, drained")
    assert "water" in (item.sr28_description or ""), item.sr28_description


def test_granulated_is_a_descriptor_before_a_proxy(resolver):
    # "granulated coconut palm sugar": the proxy of coconut palm sugar, SR28's granulated sugar
    item = resolver.ingredient("½ cup granulated coconut palm sugar")
    assert (item.ndb_no, item.grams) == ("19335", pytest.approx(100.0))
    assert "proxy:coconut palm sugar" in item.rules
