"""General reading rules for recipes the build has never seen: one test per rule, on lines
written for the test; each expected SR28 food or weight was looked up by hand in SR28
(FOOD_DES / WEIGHT) for the reason beside it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nutrireason.recipes.backoff import backoff_names
from nutrireason.recipes.coverage import LineEnergy, energy_share
from nutrireason.recipes.parse import parse_line, part_noun

# ------------------------------------------------------------------ quantities


@pytest.mark.parametrize(("line", "quantity", "unit", "why"), [
    ("1 pork butt roast, about 3 lb", 3.0, "pound", "the stated mass, not one pound"),
    ("1 whole trout, roughly 600 g, cleaned", 600.0, "gram", "the gloss may sit mid-line"),
    ("3 sweet potatoes, peeled, about 1½ pounds", 1.5, "pound", "a mass gloss for the lot"),
    ("2 trout fillets, 6 oz each", 12.0, "ounce", "a size per item stays per item"),
    ("2 lb ground pork, 85 % lean", 2.0, "pound", "the line's own number has a measure"),
    ("1 (3 lb) chicken, cut up", 3.0, "pound", "the parenthesised measure, as before"),
])
def test_a_mass_gloss_beats_a_count(line, quantity, unit, why):
    parsed = parse_line(line)
    assert (parsed.quantity, parsed.unit) == (pytest.approx(quantity), unit), why


# ------------------------------------------------------------------ parts and states


@pytest.mark.parametrize(("food", "unit", "expected"), [
    ("leaves romaine lettuce", "lettuce", ("romaine lettuce", "leaf")),
    ("leaves", "cabbage", ("cabbage", "leaf")),  # "6 cabbage leaves"
    ("rings", "pineapple", ("pineapple", "ring")),  # "8 pineapple rings"
    ("canned peach rings", None, ("canned peach", "ring")),
    ("pineapple rings", "can", None),  # "1 can pineapple rings": the can counts
    ("lettuce", "cup", None),  # a measure weighs the food
])
def test_a_counted_part_is_the_unit(food, unit, expected):
    assert part_noun(food, unit) == expected


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    ("6 leaves romaine lettuce", "11251", 36.0, "SR28 weighs a romaine leaf at 6 g (not a head)"),
    ("4 cabbage leaves", "11109", 92.0, "SR28's medium cabbage leaf is 23 g"),
    ("1½ cups frozen mango chunks", "09176", 247.5, "frozen fruit is the fruit (SR28 has mango "
     "only raw): 165 g a cup of pieces"),
    ("1 cup frozen sweetened strawberries", "09320", 255.0, "the line says sweetened"),
    ("3 tomatoes, chopped", "11529", 369.0, "a count of tomatoes is fresh: 123 g each"),
    ("1 can chopped tomatoes", "11531", None, "before the food, 'chopped' names the can"),
    ("1 box yellow cake mix", "18144", 524.0, "a box is SR28's package (18.5 oz)"),
])
def test_state_and_parts_never_change_the_food(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    if grams is not None:
        assert item.grams == pytest.approx(grams), why


# ------------------------------------------------------------------ notes


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 cup Plain, low-fat yogurt", "01117", "'plain' before a comma is no food"),
    ("3 cups bread flour (for a gluten free loaf see note)", "20083",
     "a note pointing elsewhere is no gluten-free state"),
])
def test_notes_are_never_a_name_or_a_state(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


# ------------------------------------------------------------------ name back-off


@pytest.mark.parametrize(("name", "line", "unit", "first", "why"), [
    ("white fish", "1 lb white fish (e.g. cod, haddock)", None, "cod", "the first example"),
    ("guinea corn", "2 cups guinea corn (sorghum)", None, "sorghum", "the line's gloss"),
    ("white cheese", "200 g white cheese (feta; optional)", None, "feta", "a gloss before a note"),
    ("pumpkin flesh", "2 cups pumpkin flesh", None, "pumpkin", "a form noun dropped"),
    ("baking sugar", "1 cup baking sugar", None, "sugar", "a descriptor dropped"),
    ("roots", "3 beet roots", "beet", "beet", "a form noun alone takes the counted word"),
    ("creme fraiche", "2 tbsp crème fraîche", None, None, "already folded: nothing to try"),
])
def test_back_off_names(name, line, unit, first, why):
    names = backoff_names(name, line, unit)
    assert (names[0] if names else None) == first, why


def test_a_gloss_that_is_a_measure_or_a_note_names_nothing():
    assert backoff_names("flour", "2 cups flour (about 250 g) (optional) (see note)") == []


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("2 lb venison steaks", "17164", "steaks dropped: SR28's raw venison (deer)"),
    ("½ cup (120 ml) solid fat (e.g. lard, butter)", "04002", "the first example: lard"),
    ("1 tsp white pepper powder", "02032", "powder after a spice dropped"),
])
def test_back_off_finds_the_food(resolver, line, ndb, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert any(rule.startswith("name_backoff:") for rule in item.rules)


@pytest.mark.parametrize(("name", "line", "first", "why"), [
    ("chocolate shavings", "1/3 cup chocolate shavings", "chocolate", "shavings are a form"),
    ("fat oat milk", "1 1/3 cups full-fat oat milk", "oat milk", "how fat it is, not the food"),
])
def test_more_form_nouns_and_descriptors(name, line, first, why):
    assert backoff_names(name, line)[0] == first, why


# ------------------------------------------------------------------ portions


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("1 cup small pasta, like elbows or shells", 122.0, "the example names SR28's 'cup elbows' "
     "(not its first row, 'cup spaghetti' 91 g)"),
    ("1 cup pasta, such as penne", 95.0, "'such as' gives the shape too: 'cup penne'"),
    ("1 cup chocolate chips", 168.0, "SR28's plain 'cup chips (6 oz package)', not the 'cup "
     "large chips' (182 g) listed first"),
    ("1 cup mini chocolate chips", 173.0, "the line asks for the mini chips"),
    ("1 cup heavy cream", 238.0, "the fluid cup; 'whipped' only inside its parentheses"),
])
def test_a_volume_portion_is_the_one_the_line_names(resolver, line, grams, why):
    assert resolver.ingredient(line).grams == pytest.approx(grams), why


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("1 pound chicken, cut into pieces", 453.592 * 0.68, "a bird cut up is jointed: less SR28's "
     "32 % bone for 'Chicken, broilers or fryers, meat and skin, raw'"),
    ("3 lb cut-up chicken", 3 * 453.592 * 0.68, "the same, said before the food"),
    ("1 lb chicken breast, cut into pieces", 453.592, "a named cut cut into pieces is no bird"),
    ("1 lb boneless chicken, cut into pieces", None, "boneless keeps its whole mass"),
])
def test_a_cut_up_bird_is_weighed_without_its_bone(resolver, line, grams, why):
    item = resolver.ingredient(line)
    if grams is None:
        assert "edible portion" not in (item.grams_method or ""), why
    else:
        assert item.grams == pytest.approx(grams, rel=1e-3), why


def test_a_food_made_from_an_earlier_line_is_counted_there(resolver):
    from nutrireason.recipes.schema import RecipeRecord

    lines = ["1 1/2 cups unsalted butter", "3 cups flour", "1/2 cup browned butter",
             "6 tablespoons browned butter"]
    recipe = resolver.recipe(RecipeRecord(id="b", title="Brown butter buns", servings=8,
                                          ingredients=lines))
    grams = {item.line: item.grams for item in recipe.ingredients}
    assert grams["1 1/2 cups unsalted butter"] == pytest.approx(340.5, abs=1)
    assert grams["1/2 cup browned butter"] == 0.0  # 14 tbsp of the 24 browned: counted above
    assert grams["6 tablespoons browned butter"] == 0.0
    assert recipe.kept, recipe.exclusion


def test_more_of_a_made_food_than_the_earlier_line_holds_is_its_own_food(resolver):
    from nutrireason.recipes.schema import RecipeRecord

    lines = ["2 tablespoons butter", "3 cups flour", "1 cup browned butter"]
    recipe = resolver.recipe(RecipeRecord(id="c", title="Buns", servings=8, ingredients=lines))
    assert recipe.ingredients[2].grams == pytest.approx(227, abs=1)  # a cup, not the 2 tbsp


# ------------------------------------------------------------------ coverage by energy


def test_ice_and_a_few_spices_decide_nothing_but_a_missing_oil_does():
    resolved = [(500.0, 100.0), (200.0, 50.0)]  # 500 + 100 = 600 kcal resolved
    ice = LineEnergy(200.0, 0.0, "ice or water")
    anise = LineEnergy(3.0, 337.0, "counted whole spice")
    assert energy_share(resolved, [ice, anise]) == pytest.approx(10.11 / 610.11, rel=1e-3)
    oil = LineEnergy(14.0, 884.0, "SR28 group 0400 median")  # a tablespoon: 124 kcal
    assert energy_share(resolved, [oil]) == pytest.approx(123.76 / 723.76, rel=1e-3)
    assert energy_share(resolved, [oil]) > 0.10 > energy_share(resolved, [ice, anise])


def test_an_unknown_line_takes_the_resolved_density_and_nothing_resolved_is_all_missing():
    resolved = [(400.0, 50.0)]  # 200 kcal at 0.5 kcal/g
    assert energy_share(resolved, [LineEnergy(100.0, None, "?")]) == pytest.approx(50 / 250)
    assert energy_share([], [LineEnergy(5.0, 300.0, "spice")]) == 1.0


def test_unresolved_lines_are_valued_by_their_food_group(resolver):
    energy = resolver.unresolved_energy
    assert energy.group("goat cheese crumbles") == "0100"
    assert energy.group("10 ice cubes") == "zero"
    assert energy.group("elk steaks") == "1700"
    assert energy.line("star anise", None, 3).grams == 3.0  # a counted whole spice: 1 g each
    assert energy.line("mystery blend", None, None).basis == "median of all SR28 foods"


# ------------------------------------------------------------------ standard proxies


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 lb white fish fillets", "15015", "an unnamed white fish is cod"),
    ("3 tbsp crème fraîche", "01053", "crème fraîche as heavy cream, its nearest fat content"),
    ("2 tbsp coconut sugar", "19335", "coconut sugar is sugar"),
    ("250 g paneer", "01026", "paneer as whole-milk mozzarella, its closest fresh cheese"),
])
def test_a_standard_proxy_is_used_and_marked(resolver, line, ndb, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert any(rule.startswith("proxy:") for rule in item.rules)


def test_a_food_sr28_has_is_never_a_proxy(resolver):
    item = resolver.ingredient("1 lb cod fillets")
    assert item.ndb_no == "15015" and not any(r.startswith("proxy:") for r in item.rules)


def test_proxy_share_is_the_share_of_energy():
    from nutrireason.recipes.proxies import proxy_share

    # 100 g at 884 kcal (proxy) against 400 g at 100 kcal: 884 / (884 + 400)
    assert proxy_share([(100.0, 884.0, True), (400.0, 100.0, False)]) == \
        pytest.approx(884 / 1284)


# ------------------------------------------------------------------ impossible nutrition


def test_a_nutrient_known_for_a_small_part_of_the_dish_is_unknown(resolver):
    from nutrireason.recipes.schema import RecipeRecord

    # SR28 gives acorn squash no sugar: the marmalade's sugar is known for 20 of 455 g and
    # spread over the dish would read as about 50 g per 100 g, above its carbohydrate
    record = RecipeRecord(id="squash", title="Squash with marmalade", source="test",
                          ingredients=["1 medium acorn squash, halved",
                                       "1 tablespoon orange marmalade"],
                          instructions=["Bake."], servings=2)
    recipe = resolver.recipe(record)
    assert recipe.kept
    assert recipe.nutrition.per_100g["sugar"] is None
    assert recipe.nutrition.per_serving["sugar"] is None
    assert recipe.nutrition.per_100g["carbohydrates"] is not None
    assert "high_sugar" not in recipe.nutrition.nutrient_tags


def test_sugar_above_carbohydrate_excludes_the_recipe_naming_the_line(resolver):
    from nutrireason.recipes.nutrition import recipe_nutrition

    record_lines = ["200 g sugar", "100 g butter"]
    items = [resolver.ingredient(line) for line in record_lines]
    nutrients = {ndb: dict(values) for ndb, values in resolver.nutrients.items()
                 if ndb in {i.ndb_no for i in items}}
    butter = next(i.ndb_no for i in items if "butter" in i.line)
    nutrients[butter]["sugar"] = 150.0  # a corrupt table: sugar over the food's carbohydrate
    nutrition = recipe_nutrition(items, nutrients, 2, resolver.standards, 0.8)
    reason = replace(resolver, nutrients=nutrients)._impossible_nutrition(nutrition, items)
    assert reason is not None and "'100 g butter'" in reason


@pytest.mark.parametrize(("text", "field"), [
    ('proxies:\n  - {names: [a], source: "s"}\n', "proxies[0]"),
    ('proxies:\n  - {names: [a], ndb_no: "01001", source: "s"}\n'
     '  - {names: [A], ndb_no: "01002", source: "s"}\n', "proxies[1]"),
])
def test_a_bad_proxy_file_names_the_entry(tmp_path, text, field):
    from nutrireason.errors import DataError
    from nutrireason.recipes.proxies import load_proxies

    path = tmp_path / "proxies.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_proxies(path)
    assert field in str(caught.value) and "proxies.yaml" in str(caught.value)


def test_an_amount_relative_to_another_line_is_its_own_food(resolver):
    from nutrireason.recipes.schema import RecipeRecord

    lines = ["1 medium tomato", "about ¾ the weight of Mozzarella cheese as the tomato, sliced"]
    recipe = resolver.recipe(RecipeRecord(id="c", title="Caprese", servings=2, ingredients=lines))
    tomato, cheese = recipe.ingredients
    assert tomato.grams == pytest.approx(123.0)  # SR28's medium tomato
    # the food after "of" (not the tomato the line ends with), at ¾ of the tomato's 123 g
    assert cheese.ndb_no == "01026" and cheese.grams == pytest.approx(92.25)
    assert "relative_amount" in cheese.rules


# ------------------------------------------------------------------ classes, trimming, bottles


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("3 cups chopped mixed vegetables (e.g. zucchini, peppers)", "11477",
     "a mixture with examples is its first example: zucchini, not SR28's frozen corn-and-peas mix"),
    ("2 cups leafy greens (such as chard or spinach)", "11147",
     "the first of 'chard or spinach': Swiss chard, raw"),
    ("1 cup mixed nuts (like walnuts or pecans)", "12155", "the first example: English walnuts"),
    ("1 cup shredded cheese (such as Monterey Jack)", "01025", "the first example: Monterey"),
    ("500 g minced meat (either pork or beef)", "10219",
     "the name's 'minced' stays on its example: ground pork, raw"),
    ("500 g ground meat of your choice (e.g. beef or pork)", "23572",
     "'of your choice' is a note: ground meat with examples is ground beef"),
])
def test_a_class_of_foods_with_examples_is_its_first_example(resolver, line, ndb, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert any(rule.startswith("collective_example:") for rule in item.rules)


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("8 oz cream cheese (like Philadelphia)", "01017",
     "'cream' makes it one food: the example is a brand, not what the cheese is"),
    ("1 cup pine nuts (such as Italian)", "12147", "pine nuts are one food"),
    ("2 cups mixed vegetables", "11583", "no example: SR28's mixed vegetables"),
    ("2 cups leafy vegetables (ugu or scent leaves)", None,
     "an example SR28 lacks is no licence for the class noun alone (not SR28's mixed vegetables)"),
])
def test_one_food_or_no_example_keeps_the_name(resolver, line, ndb, why):
    item = resolver.ingredient(line)
    assert item.ndb_no == ndb, why
    assert not any(rule.startswith("collective_example:") for rule in item.rules)


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("2 cups plant-based milk (such as oat or soy)", "14639",
     "a one-word example is a kind of the line's food: oat milk (the rice-milk proxy), not oats"),
    ("1 cup sweetener (such as coconut sugar)", "19335",
     "a longer example names the food: coconut sugar (the granulated-sugar proxy)"),
    ("2 tbsp dry rub", "02015", "a rub is a blend of ground spices: the curry-powder proxy"),
    ("¼ cup BBQ rub", "02015", "any name ending in 'rub'"),
    ("2 lb beef, cut into 1-inch cubes", "23093", "cubed beef is stewing beef (chuck for stew)"),
    ("1 kg beef, cubed", "23093", "the same, said with 'cubed'"),
    ("2 lb beef", "13795", "beef of no cut and no cubes stays SR28's composite of retail cuts"),
    ("2 lb beef bottom round, cut into cubes", "13868",
     "a named cut stays that cut: bottom round steak, not stewing beef"),
    ("1 lb lamb, cut into 2 cm pieces", "17001", "lamb the cook cuts up keeps its fat: SR28's "
     "'cubed for stew or kabob' is lean only"),
    ("700 g lamb or goat meat, cut into large chunks", "17001",
     "'lamb or goat meat' is lamb meat"),
    ("500 g stewing lamb", "17059", "stewing lamb is the stew cut"),
    ("1 lb lamb", "17001", "uncut lamb stays SR28's composite of retail cuts"),
])
def test_examples_rubs_and_stew_cuts_read_as_the_food(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


@pytest.mark.parametrize("line", ["2 tbsp dry rub", "¼ cup BBQ rub"])
def test_a_rub_is_marked_as_a_proxy(resolver, line):
    assert "proxy:* rub" in resolver.ingredient(line).rules


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("1 lb fresh asparagus, trimmed", 453.592 * 0.53, "SR28 asparagus: 47 % butt ends"),
    ("2 kg strawberries, hulled", 2000 * 0.94, "SR28 strawberries: 6 % caps and stems"),
    ("1 pound green beans (ends trimmed)", 453.592 * 0.88,
     "an instruction in parentheses; SR28 snap beans: 12 % ends, strings, trimmings"),
    ("1 lb trimmed asparagus", 453.592, "trimmed before the food: weighed trimmed"),
    ("1 lb asparagus", 453.592, "no instruction: the stated mass"),
    ("6 asparagus spears, trimmed", 6 * 16.0,
     "a count is weighed by SR28's spear, already the edible part (1 spear, 7\" = 16 g)"),
    ("2 bananas (200 g, previously peeled)", 200.0, "already peeled: the stated mass is eaten"),
    ("1 lb already peeled carrots, sliced", 453.592, "already peeled"),
    ("¾ pound (330 g) peeled cooking apples", 340.194, "peeled before the food: bought peeled"),
    ("1 jar (20 oz) sweet peppers, sliced and seeded", 566.99,
     "a jar holds the food ready to use: no produce refuse"),
    ("1 bottle of dry red wine", 750 / 29.57 * 29.4, "750 ml at SR28's 29.4 g a fl oz"),
    ("2 bottles white wine", 2 * 750 / 29.57 * 29.4, "two standard bottles"),
    ("1 bottle (375 ml) red wine", 375 / 29.57 * 29.4, "a bottle with its own size keeps it"),
    ("1 cup plus 2 tablespoons all-purpose flour", 125 * 1.125,
     "SR28 flour 1 cup = 125 g; two tablespoons are an eighth of a cup more"),
    ("2 tablespoons plus 1 teaspoon sugar", 7 * 4.2, "seven teaspoons at SR28's 4.2 g"),
    ("1 lb plus 4 oz ground beef", 453.592 + 4 * 28.3495, "a mass plus a mass"),
    ("1 tablespoon plus 2 cups vegetable oil, divided", 33 * 13.6,
     "both parts of a divided line: 33 tablespoons at SR28's 13.6 g"),
])
def test_trimming_bottles_and_plus_amounts_weigh_what_the_line_says(resolver, line, grams,
                                                                     why):
    rel = 0.01 if "bottle" in line else 1e-3
    assert resolver.ingredient(line).grams == pytest.approx(grams, rel=rel), why


def test_a_trimming_word_on_meat_takes_no_produce_refuse(resolver):
    item = resolver.ingredient("1 lb pork loin, trimmed of fat")
    # no produce refuse (22 % bone stays with a loin weighed as bought); the fat the line
    # trims is: SR28 10024 (lean only, refuse 30 %: bone 22 %, separable fat 8 %)
    assert item.grams == pytest.approx(453.592 * 0.92)
    assert "trimmed_as_bought" not in item.rules and "fat_trimmed" in item.rules


def test_wine_vinegar_is_no_wine_bottle(resolver):
    assert "wine_bottle" not in resolver.ingredient("1 bottle red wine vinegar").rules


# ------------------------------------------------------------------ slashes, concentrates, cups


@pytest.mark.parametrize(("text", "expected", "why"), [
    ("lean beef stewing/braising steak", "lean beef stewing steak",
     "two words joined by a slash are alternatives: the first, with the shared noun"),
    ("salmon/fish stock", "salmon stock", "the first alternative, as for 'or'"),
    ("salt and/or pepper", "salt", "'and/or' is an 'or' (the first food), not a slash pair"),
    ("1/2 cup milk", "1/2 cup milk", "a fraction is no pair of words"),
    ("300 g/11 oz flour", "300 g/11 oz flour", "a unit and a number: a gloss, not words"),
])
def test_slashed_words_are_alternatives(text, expected, why):
    from nutrireason.recipes.lines import first_alternative

    assert first_alternative(text) == expected, why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    # SR28 14543 "Beverages, lemonade, frozen concentrate, pink, prepared with water" is the
    # drink; 14542 "Lemonade, frozen concentrate, pink" the undiluted concentrate (about 4x
    # the energy per fl oz, 36.4 g against 30.9 g)
    ("½ cup pink lemonade", "14543", "a drink named as a drink is the diluted entry"),
    ("500 g (1.1 lb) of lean beef stewing/braising steak (in chunks)", "23093",
     "stewing steak is SR28's beef chuck for stew, lean and fat"),
])
def test_the_food_as_the_line_names_it(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


def test_a_concentrate_needs_the_word():
    from nutrireason.recipes.match import unasked_concentrate

    concentrate = "Lemonade, frozen concentrate, pink"
    assert unasked_concentrate("pink lemonade", concentrate)
    assert not unasked_concentrate("pink lemonade concentrate", concentrate)
    assert not unasked_concentrate(
        "pink lemonade", "Beverages, lemonade, frozen concentrate, pink, prepared with water")


@pytest.mark.parametrize(("line", "grams", "why"), [
    # SR28 16335 "Beans, kidney, red, mature seeds, canned, drained solids, rinsed in tap
    # water": 1 cup rinsed solids 158 g; the 256 g cup of 16034 holds the canning liquid
    ("4 cups canned kidney beans, rinsed and drained", 632.0,
     "a cup of drained beans by a drained relative's cup, not the beans in their liquid"),
    # SR28 16359 "Chickpeas ..., canned, drained, rinsed in tap water": 1 cup 152 g
    ("2 cups canned chickpeas, drained", 304.0, "the same for chickpeas (not 240 g a cup)"),
])
def test_a_cup_of_drained_solids_weighs_as_drained(resolver, line, grams, why):
    assert resolver.ingredient(line).grams == pytest.approx(grams), why


def test_the_second_of_slashed_words_is_a_later_alternative(resolver):
    from nutrireason.recipes.lines import later_alternatives

    assert later_alternatives("1/2 gallon salmon/fish stock") == ["fish stock"]
    # SR28 has no salmon stock: the later alternative, 06174 "Fish, fish stock, home-prepared"
    assert resolver.ingredient("½ gallon salmon/fish stock").ndb_no == "06174"


@pytest.mark.parametrize(("line", "grams", "why"), [
    # SR28 10224 "Pork, fresh, loin, top loin (roasts), boneless, ...": 1 roast 2195 g; the
    # 1327 g of 10052 is the meat of a bone-in sirloin roast of 1817 g
    ("2 boneless pork loin roasts", 4390.0, "a boneless roast by SR28's boneless roast"),
    ("1 bone-in pork loin roast", 1327.0, "a bone-in roast keeps the bone-in roast's meat"),
])
def test_a_relative_piece_keeps_the_line_s_bone(resolver, line, grams, why):
    assert resolver.ingredient(line).grams == pytest.approx(grams), why


def test_a_boneless_piece_is_its_own_entry(resolver):
    item = resolver.ingredient("2 boneless pork loin roasts")
    # the entry the map gives "pork loin" (10020, the whole loin) says no bone; the piece's
    # entry says boneless, as the line does: it is the food too
    assert (item.ndb_no, "boned_piece") == ("10224", item.rules[-1])
    assert resolver.ingredient("1 pork loin roast").ndb_no == "10020"


def test_bone_words_agree_or_disagree():
    from nutrireason.recipes.build import other_bone, same_bone

    bone_in = "Pork, fresh, loin, sirloin (chops or roasts), bone-in, separable lean and fat, raw"
    boneless = "Pork, fresh, loin, top loin (roasts), boneless, separable lean and fat, raw"
    assert other_bone("2 boneless pork loin roasts", bone_in)
    assert not other_bone("2 boneless pork loin roasts", boneless)
    assert same_bone("2 boneless pork loin roasts", boneless)
    assert other_bone("1 pork roast on the bone", boneless)
    assert not other_bone("1 pork loin roast", bone_in) and not same_bone("1 pork roast", bone_in)


@pytest.mark.parametrize(("line", "ndb", "why"), [
    ("1 lb beef chuck, cut into ½-inch pieces", "23093",
     "chuck cut into pieces is SR28's chuck for stew, the cut the stew meat is made of"),
    ("1 lb beef chuck", "23102", "uncut chuck stays the chuck pot roast (SR28 23102)"),
    ("1 lb beef sirloin, cut into cubes", "13929", "another cut cubed stays that cut"),
    ("2 lb lamb shoulder, cubed", "17035", "lamb's stew entry is lean only: the shoulder stays"),
])
def test_the_stew_cut_is_the_species_or_the_cut_it_is_made_of(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    # SR28 23611 "Beef, top sirloin, steak, separable lean only, trimmed to 1/8" fat, all
    # grades, raw": refuse 16 % (bone and connective tissue 3 %, separable fat 13 %)
    # against 3 % bone and tissue for 13929, the lean and fat: 13 % separable fat
    ("2 lb sirloin steak, fat trimmed", "23611", 907.185 * 0.87,
     "the fat trimmed off: the separable lean, less the separable fat"),
    ("2 lb sirloin steak, trimmed of excess fat", "23611", 907.185 * 0.87, "said the other way"),
    ("2 lb sirloin steak", "13929", 907.185, "a cut as bought keeps its fat"),
    # SR28 13293, the chuck pot roast's separable lean (refuse 19 %) against 23102, its lean
    # and fat at 0" (refuse 6 %): 13 % separable fat
    ("1 lb beef chuck roast, trimmed of fat", "13293", 453.592 * 0.87,
     "already at 0\" trim: the separable lean, less the separable fat"),
    # SR28 23339 "Beef, loin, top loin steak, boneless, lip off, separable lean and fat,
    # trimmed to 0\" fat": the same cut as the map's 23388 (lip-on, 1/8") with its outer fat off
    ("1 lb strip steak, trimmed of excess fat", "23339", 453.592,
     "the cut trimmed to 0\" fat, as bought: the seam fat stays"),
])
def test_a_cut_trimmed_of_its_fat_is_its_separable_lean(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    # SR28 23485 "Beef, composite of trimmed retail cuts, separable lean only, trimmed to 0"
    # fat, all grades, raw"; 13795 the lean and fat composite at 1/8" trim (the generic beef)
    ("500 g lean beef, cut into cubes", "23485", "lean meat nobody grinds is lean meat"),
    ("1 lb lean beef, thinly sliced", "23485", "sliced is not ground either"),
    ("1 lb lean ground beef", "23562", "ground: SR28's 90 % lean ground beef"),
    ("1 lb lean beef mince", "23562", "'mince' grinds it; 'lean' is USDA's 10 % fat at most"),
    ("1 lb extra lean ground beef", "23557", "'extra lean' is USDA's 5 % fat at most"),
    ("1 lb 85% lean ground beef", "23567", "a stated share beats the word"),
    ("1 lb lean ground beef (extra for garnish)", "23562", "'extra' elsewhere is not 'extra lean'"),
    ("1 lb pork, cubed", "10187", "SR28's generic pork, as before"),
    ("1 lb ground pork", "10219", "ground pork stays ground"),
])
def test_meat_is_ground_only_when_the_line_grinds_it(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    # proxies.yaml: crème fraîche -> 01053 "Cream, fluid, heavy whipping" (36 % fat)
    ("½ cup crème fraîche, single cream, or milk", "01053",
     "the first food through its proxy, not the later alternative milk"),
    ("1 cup crème fraîche or sour cream", "01053", "the same with one alternative"),
    # 01055 "Cream, sour, reduced fat, cultured": heavy cream's reduced-fat sibling
    ("½ cup reduced fat crème fraîche", "01055",
     "the qualifier is asked of the proxy's entry, not part of the proxy's name"),
    ("1 cup caldo de pollo or chicken stock", "06172",
     "no proxy for the first food: the alternative SR28 has (chicken stock)"),
])
def test_the_first_food_s_proxy_comes_before_a_later_alternative(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    # proxies.yaml: any liqueur SR28 lacks -> 14414 coffee liqueur, 53 proof (1 fl oz 34.8 g)
    ("1 tbsp orange liqueur", "14414", 17.4, "half a fluid ounce of SR28's liqueur"),
    ("1 oz (28 g) hazelnut liqueur", "14414", 28.35, "the stated ounce"),
    # toast -> 18070 "Bread, white, commercially prepared, toasted": "1 slice" 22 g, listed
    # after "1 slice, large" 27 g and "1 slice crust not eaten" 11 g
    ("4 slices of toast", "18070", 88.0, "the plain slice, not the large one listed first"),
    ("2 large slices toast", "18070", 54.0, "a stated size keeps its slice"),
])
def test_cited_proxies_and_the_plain_piece(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    # 01009 "Cheese, cheddar"; 11457 "Spinach, raw"
    ("6 oz grated hard cheese (a mix of cheddar and parmesan is good)", "01009",
     "a mix's first food is the food, as an 'or' list's is"),
    ("2 cups leafy greens (a mixture of spinach and kale)", "11457", "said as a mixture"),
])
def test_a_mix_of_foods_is_its_first_food(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    # 05074 "Chicken, broilers or fryers, drumstick, meat only, cooked, stewed": "1 drumstick,
    # bone and skin removed" 46 g (SR28 gives one size)
    ("Shredded cooked chicken (about 2 small drumsticks)", "05074", 92.0,
     "the gloss counts the pieces of a line with no quantity of its own"),
    # 15236 "Fish, salmon, Atlantic, farmed, raw": "0.5 fillet" 198 g
    ("Salmon (2 fillets)", "15236", 396.0, "a fish's fillets likewise"),
])
def test_a_count_in_a_gloss_quantifies_a_line_without_one(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.kind, item.ndb_no, item.grams) == ("quantified", ndb,
                                                    pytest.approx(grams, abs=0.01)), why


def test_a_gloss_that_counts_other_things_leaves_the_line_unquantified(resolver):
    assert resolver.ingredient("Bread (about 3 rolls)").kind == "unquantified"
    assert resolver.ingredient("Fresh parsley (2 sprigs)").grams is None


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    # standard_weights.yaml: dry pasta by the package or box, the US pound (454 g)
    ("1 pack of lasagne sheets", "20120", 454.0, "a pack of dry pasta SR28 gives no weight for"),
    ("1 box spaghetti", "20120", 454.0, "a box likewise"),
    ("1 package egg noodles", "20109", 454.0, "dry egg noodles likewise"),
    ("1 package (12 oz) spaghetti", "20120", 340.194, "a stated size beats the standard"),
])
def test_a_package_of_dry_pasta_weighs_a_pound(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


@pytest.mark.parametrize(("line", "ndb", "grams", "why"), [
    # 08509 "Cereals ready-to-eat, USDA Commodity Rice Crisps": "1 cup (1 NLEA serving)" 28 g;
    # 08156 "Cereals ready-to-eat, rice, puffed, fortified": "1 cup" 14 g
    ("6 cups Rice Krispies", "08509", 168.0, "crisped rice, SR28's unbranded rice crisps"),
    ("1 cup puffed cereal (e.g. Rice Krispies)", "08509", 28.0, "the example names it"),
    ("2 cups puffed rice", "08156", 28.0, "puffed rice is the lighter puffed grain"),
])
def test_crisped_rice_is_not_puffed_rice(resolver, line, ndb, grams, why):
    item = resolver.ingredient(line)
    assert (item.ndb_no, item.grams) == (ndb, pytest.approx(grams, abs=0.01)), why


@pytest.mark.parametrize(("line", "ndb", "why"), [
    # 01077 "Milk, whole, 3.25% milkfat"; 14411 tap water
    ("2 cups boiling milk", "01077", "a serving temperature is no other food"),
    ("1 cup warmed milk", "01077", "warmed likewise"),
    ("2 cups boiling water", "14411", "water stays water"),
])
def test_a_temperature_is_not_part_of_the_name(resolver, line, ndb, why):
    assert resolver.ingredient(line).ndb_no == ndb, why
