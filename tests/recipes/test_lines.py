"""Text rules before the slicer, quantity rules, servings: one test per rule, lines written for
the test (each with the reading a cook would give it)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nutrireason.recipes.lines import (
    each_clause,
    expand_abbreviations,
    first_alternative,
    leading_quantity,
    paren_measure,
    prepare,
    split_parentheticals,
    strip_noise,
)
from nutrireason.recipes.parse import line_states, parse_line
from nutrireason.recipes.servings import parse_yield, servings_from


def test_noise_goes_and_fractions_are_spelled_out():
    assert strip_noise("1¼ cups milk (warmed to 110°F) [See Note 2] ✨") == \
        "1 1/4 cups milk (warmed to )"
    assert strip_noise("<b>½</b> cup sugar") == "1/2 cup sugar"


def test_parentheticals_leave_the_main_text_innermost_first():
    main, found = split_parentheticals("1/2 stick ((4 tbsp) butter), soft")
    assert main == "1/2 stick , soft"
    assert found == ["4 tbsp", "butter"]


@pytest.mark.parametrize(("text", "expected"), [
    ("1 cup plain yogurt or sour cream", "1 cup plain yogurt"),  # first-named food
    ("1 or 2 eggs", "1 or 2 eggs"),  # a numeric alternative is a range, kept
    ("1 cup fresh or frozen peas", "1 cup fresh peas"),  # alternative adjectives
    ("2 cups oat or soy milk", "2 cups oat milk"),  # the shared noun stays
    ("1 cup stock / water", "1 cup stock"),
    ("1 cup milk or white stock", "1 cup milk"),  # not "milk stock"
    # a one-word first food with the other's noun, a food the map knows; the other's
    # adjective is not the first food's
    ("1 cup whipping or light cream", "1 cup whipping cream"),
    ("1 cup heavy or light cream", "1 cup heavy cream"),
    ("2 tbsp granulated or brown sugar", "2 tbsp granulated sugar"),
    ("1 cup bacon or smoked sausage", "1 cup bacon"),  # "bacon sausage" is no food
    ("1 lemon, or 3 tablespoons lemon juice", "1 lemon"),  # a lemon is a food alone
])
def test_first_alternative(text, expected):
    assert first_alternative(text) == expected


def test_abbreviations_and_approximators():
    assert expand_abbreviations("3 TB butter") == "3 tablespoon butter"
    assert expand_abbreviations("about 2 pounds potatoes") == "2 pounds potatoes"
    assert expand_abbreviations("6 - 8 cups water") == "6-8 cups water"
    assert expand_abbreviations("2 Tbsp - soy sauce") == "2 Tbsp soy sauce"


@pytest.mark.parametrize(("text", "quantity", "unit"), [
    ("1 1/2 cups flour", 1.5, None),
    ("1-1/2 pounds pork", 1.5, None),  # hyphenated mixed number, not a range
    ("2-3 carrots", 2.0, None),  # a range: its first number
    ("2 to 4 tbsp oil", 2.0, None),
    ("3/4 cup rice", 0.75, None),
    ("2 14-ounce cans tomatoes", 28.0, "ounce"),  # two cans of 14 ounces
    ("3 x 200 g tubs yogurt", 600.0, "gram"),
    ("1 12-16 oz bag frozen corn", 12.0, "ounce"),  # pack size given as a range
    ("salt to taste", None, None),
])
def test_leading_quantity(text, quantity, unit):
    found = leading_quantity(text)
    assert (found.quantity if found else None, found.unit if found else None) == (quantity, unit)


@pytest.mark.parametrize(("line", "quantity", "unit", "each"), [
    ("1 (15-ounce) can beans", 15, "ounce", True),  # follows the number: one can's size
    ("4 lamb shanks (about 3 pounds)", 3, "pound", False),  # after the food: the total
    ("2 trout (8 oz. each, cleaned)", 8, "ounce", True),
    ("2 tins sardines (120 g / 4 oz each)", 120, "gram", True),
    # a range gives its first number, as a leading range does: one steak of 6 to 8 ounces
    ("1 (6–8 oz / 170–225 g) ribeye steak", 6, "ounce", True),
    ("4 ea. (28–32 ounces) boneless chicken breasts", 28, "ounce", False),  # the four together
    ("2 cans (30 to 40 oz) crushed pineapple", 30, "ounce", False),
    ("1 (3-1/2 oz) bar chocolate", 3.5, "ounce", True),  # a mixed number, not 3 to 1/2
    ("1 roast (4-3 pounds)", None, None, None),  # a range that falls is no measure
    ("1 cup rice (cooked)", None, None, None),
])
def test_paren_measure(line, quantity, unit, each):
    text = strip_noise(line)
    found = paren_measure(text, split_parentheticals(text)[1])
    if quantity is None:
        assert found is None
    else:
        assert (found.quantity, found.unit, found.each) == (quantity, unit, each)


@pytest.mark.parametrize(("line", "quantity", "unit", "food"), [
    # the slicer multiplies numbers it meets later in the line: the line's own number wins
    ("3 lbs pork shoulder (cut into 3 large pieces)", 3, "pound", "pork shoulder"),
    ("2 lbs. ground turkey (93-7 % lean)", 2, "pound", "turkey"),
    ("1 (28 oz) can crushed tomatoes", 28, "ounce", "tomatoes"),
    ("6 chicken thighs (about 2 pounds)", 2, "pound", "chicken thigh"),  # the cut stays
    ("1 cup (150 g) cashews", 150, "gram", "cashews"),  # a mass beats a cup
    ("1 ea. (3–4 pounds) whole chicken", 3, "pound", "chicken"),  # a range: its first
    ("⅔–¾ cup (120–150 g) brown sugar", 120, "gram", "brown sugar"),
    ("1 pack (800 g) spaghetti noodles", 800, "gram", "spaghetti noodles"),  # a pack: package
    ("250 g (2 cups) flour", 250, "gram", "flour"),  # a mass on the line stays
    ("1 lb asparagus, tough ends snapped off", 1, "pound", "asparagus"),
    # the slicer drops product nouns that are also unit words: they name another food
    ("3 lbs beef short ribs", 3, "pound", "beef short ribs"),
    ("1 tube (8 oz) crescent rolls", 8, "ounce", "crescent rolls"),
    ("6 brioche buns, split", 6, "bun", "brioche buns"),
    # temperature words are not part of the food
    ("2 cups cold buttermilk", 2, "cup", "buttermilk"),
    # only state words before the parenthetical: the food is inside it
    ("3 boneless (skinless turkey cutlets, pounded thin)", 3, None, "skinless turkey cutlets"),
])
def test_parse_line_quantities(line, quantity, unit, food):
    parsed = parse_line(line)
    assert (parsed.quantity, parsed.unit, parsed.food) == (quantity, unit, food)


@pytest.mark.parametrize("line", ["1e12 cups flour", "1000000000000 cups sugar",
                                  "300 cups rice", "40 kg butter", "900 eggs"])
def test_absurd_quantities_are_named_not_used(line):
    parsed = parse_line(line)
    assert parsed.problem and parsed.problem.startswith("implausible quantity"), line


def test_equipment_lines_are_not_food():
    parsed = parse_line("8 wooden skewers, soaked")
    assert parsed.kind == "header" and parsed.problem == "equipment, not food"


@pytest.mark.parametrize(("line", "states"), [
    ("2 cups cooked brown rice", ["cooked"]),
    ("1 can (15 oz) kidney beans, drained and rinsed", ["canned", "drained", "rinsed"]),
    ("1 (14 oz) tin coconut milk", ["canned"]),
    ("2 cups fresh spinach (or frozen, thawed)", []),  # the alternative does not count
    ("1 lb 85/15 ground beef", ["lean:85"]),
    ("4 bone-in chicken thighs", ["bone_in", "part:thigh"]),
    ("1 cup uncooked orzo", ["raw"]),
])
def test_line_states(line, states):
    assert line_states(line) == states


@pytest.mark.parametrize(("text", "count"), [
    ("6", 6), ("Serves 4-6", 5), ("Makes 24 mini muffins", 24), ("2 loaves", 2),
    ("Makes about 3 dozen", 36), ("one 9-inch tart", 1), ("4 to 6 servings", 5),
    ("Varies", None),
])
def test_yield_text(text, count):
    assert parse_yield(text) == count


@pytest.mark.parametrize("value", [0, -3, "serves 0", 10_000, True])
def test_non_positive_or_absurd_servings_are_refused(value):
    with pytest.raises(ValueError, match="servings"):
        servings_from(value)


def test_prepare_records_the_rules_it_applied():
    prepared = prepare("2 TB olive oil (extra virgin) or butter")
    assert prepared.main == "2 tablespoon olive oil"
    assert {"parentheticals", "alternative", "abbreviations"} <= set(prepared.rules)


def test_slicer_density_lookup_is_memoised_without_changing_answers():
    from ingredient_slicer import _utils

    import nutrireason.recipes.parse  # noqa: F401  (installs the memo)

    assert getattr(_utils._get_food_density, "memoised", False)
    first = _utils._get_food_density("brown sugar", "dice")
    first["density"] = -1  # a caller changing its copy does not change the next answer
    assert _utils._get_food_density("brown sugar", "dice") != first


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcde fgh-", max_size=14), st.text(alphabet="abcde fgh-", max_size=14))
def test_slicer_dice_similarity_is_replaced_by_the_same_formula(first, second):
    from ingredient_slicer import _utils

    from nutrireason.recipes.parse import SLICER_DICE, _dice_similarity

    assert _utils._dice_coeff_similarity is _dice_similarity
    assert _dice_similarity(first, second) == SLICER_DICE(first, second)
    assert _dice_similarity("brown sugar", "sugar, brown") == SLICER_DICE("brown sugar",
                                                                          "sugar, brown")


def test_html_entities_are_characters_not_numbers():
    parsed = parse_line("&#189; cup (120 ml) butter")  # ½ cup, not 189 cups
    assert (parsed.quantity, parsed.unit, parsed.problem) == (0.5, "cup", None)


def test_a_number_word_in_a_name_is_no_quantity():
    parsed = parse_line("Thousand Island dressing")
    assert parsed.kind == "unquantified" and parsed.problem is None


@pytest.mark.parametrize(("main", "size", "unit"), [
    ("4 trout fillets, about 6 oz each", 6, "ounce"),
    ("2 ribeye steaks, 10-12 ounces each, patted dry", 10, "ounce"),  # a range: its first
    ("6 chicken thighs, 150 g each", 150, "gram"),
    ("2 lbs chicken wings, 4 oz each", None, None),  # the line's number is already a mass
    ("4 pork chops, 1 inch thick", None, None),  # a thickness, not a size
    ("3 potatoes each about 200 g", None, None),  # no comma: not read
])
def test_each_clause(main, size, unit):
    found = each_clause(main)
    assert (found.quantity if found else None, found.unit if found else None) == (size, unit)


@pytest.mark.parametrize(("line", "quantity", "unit", "why"), [
    ("9-inch (22 cm) pre-made pie crust", 1.0, None, "a length where the amount stands is the "
     "crust's size: one crust, not nine"),
    ("50 mm piece cinnamon stick", 1.0, "piece", "one 5 cm piece, not 50 sticks"),
    ("24 ea. ¼-inch (0.5 cm) French bread baguette slices", 24.0, "slice",
     "24 slices a quarter inch thick, not 24 1/4 slices"),
    ("2 ½-inch thick lemon slices", 2.0, "slice", "two slices, not 2 1/2"),
    ("12 ea. 10-inch flour tortillas", 12.0, "tortilla", "a whole number before the size stays"),
    ("1 dozen big tangerines", 12.0, None, "a dozen is twelve"),
    ("1 1/2 dozen eggs", 18.0, "egg", "a dozen and a half is eighteen"),
    ("3 dessert spoons sweet port", 6.0, "teaspoon", "a dessert spoon is two teaspoons (10 ml)"),
    ("3 soupspoons sugar", 9.0, "teaspoon", "a soup spoon is a tablespoon"),
    ("2 fifths vodka", 1514.0, "milliliter", "a fifth is a fifth of a US gallon, 757 ml"),
])
def test_household_measures_and_lengths(line, quantity, unit, why):
    parsed = parse_line(line)
    assert (parsed.quantity, parsed.unit) == (quantity, unit), why


@pytest.mark.parametrize(("line", "quantity", "unit", "why"), [
    ("12 small potatoes or 10 medium ones weighing approximately 971g", 971.0, "gram",
     "a stated weight is the line's total, not 12 SR28 potatoes"),
    ("2 chickens weighing about 3 lbs each", 6.0, "pound", "a weight 'each' is per bird"),
    ("½ of a 15 ounce can whole corn, drained", 7.5, "ounce",
     "half of a 15-ounce can, not half an ounce"),
])
def test_stated_weights(line, quantity, unit, why):
    parsed = parse_line(line)
    assert (parsed.quantity, parsed.unit) == (quantity, unit), why
