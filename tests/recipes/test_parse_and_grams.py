"""Ingredient lines: parsing, and grams from mass units, SR28 portions and counts."""

from __future__ import annotations

import pytest

from nutrireason.recipes.grams import measure_unit
from nutrireason.recipes.parse import parse_line
from nutrireason.recipes.units import convert


@pytest.mark.parametrize(("line", "kind", "quantity", "unit_kind", "food"), [
    ("200g plain flour", "quantified", 200, "mass", "plain flour"),
    ("2-3 cloves garlic", "quantified", 2.0, "count", "garlic"),  # the first number
    ("1 (15 ounce) can black beans, drained", "quantified", 15, "mass", "black beans"),
    ("½ cup (1 stick) butter, softened", "quantified", 0.5, "volume", "butter"),
    ("salt and pepper to taste", "unquantified", None, "vague", "salt pepper"),
    ("For the sauce:", "header", None, None, None),
])
def test_parse_line(line, kind, quantity, unit_kind, food):
    parsed = parse_line(line)
    assert (parsed.kind, parsed.quantity, parsed.unit_kind, parsed.food) == (
        kind, quantity, unit_kind, food)
    assert parsed.line == line


def test_units_convert_through_pint():
    assert convert(1, "pound", "gram") == pytest.approx(453.592, rel=1e-4)
    assert convert(1, "cup", "tablespoon") == pytest.approx(16)
    assert convert(250, "milliliter", "cup") == pytest.approx(1.0567, rel=1e-3)


@pytest.mark.parametrize(("measure", "unit"), [
    ("cup", "cup"), ("cup, chopped", "cup"), ("tbsp", "tablespoon"), ("fl oz", "fluid_ounce"),
    ("oz", "ounce"), ("large", None), ("clove", None), ('medium (2-1/2" dia)', None),
])
def test_sr28_measures(measure, unit):
    assert measure_unit(measure) == unit


def weigh(resolver, line):
    return resolver.ingredient(line)


def test_mass_units_need_no_portion(resolver):
    item = weigh(resolver, "1 lb. ground beef")
    assert item.grams == pytest.approx(453.592, rel=1e-4) and item.grams_method == "mass:pound"


def test_volume_uses_the_foods_own_sr28_portion(resolver, sr28):
    item = weigh(resolver, "1/2 cup chopped celery")
    weights = sr28.weights[(sr28.weights.ndb_no == item.ndb_no)]
    chopped = weights[weights.measure.str.contains("chopped")].iloc[0]
    assert item.grams == pytest.approx(chopped.grams / 2)
    assert item.grams_method.startswith("sr28_weight:") and "chopped" in item.grams_method


def test_counts_use_the_named_size_or_medium(resolver):
    large = weigh(resolver, "3 large eggs")
    assert large.sr28_description == "Egg, whole, raw, fresh"
    assert large.grams == pytest.approx(150) and "large" in large.grams_method
    onion = weigh(resolver, "1 onion, diced")
    assert "medium" in onion.grams_method


def test_unquantified_lines_get_a_food_but_no_grams(resolver):
    item = weigh(resolver, "salt to taste")
    assert item.kind == "unquantified" and item.grams is None
    assert item.sr28_description == "Salt, table"


def test_a_reviewed_override_replaces_a_wrong_sr28_portion():
    import pandas as pd

    from nutrireason.recipes.grams import Weigher

    # SR28 weighs one slice of French bread (18029) at 139 g; the reviewed map says 25 g.
    weights = pd.DataFrame({"ndb_no": ["18029", "18029", "18033"], "seq": [1, 2, 1],
                            "amount": [1.0, 1.0, 1.0], "measure": ["oz", "slice", "slice"],
                            "grams": [28.35, 139.0, 20.0]})
    weigher = Weigher(weights, {"18029": {"baguette": 250.0}}, {"18029": {"slice": 25.0}})
    slices = weigher.weigh(parse_line("24 slices french bread"), "18029")
    assert slices.grams == pytest.approx(24 * 25)
    assert weigher.weigh(parse_line("2 slices italian bread"), "18033").grams == \
        pytest.approx(40)  # foods without an override keep SR28's portion
    assert weigher.weigh(parse_line("1 baguette"), "18029").grams == pytest.approx(250)


def test_the_map_refuses_an_override_without_a_reason(tmp_path):
    from nutrireason.errors import DataError
    from nutrireason.recipes.rules import load_ingredient_map

    path = tmp_path / "map.yaml"
    path.write_text('entries:\n  - {ndb_no: "18029", description: "Bread, french", '
                    'names: [baguette], weight_overrides: {slice: 25}}\n', encoding="utf-8")
    with pytest.raises(DataError, match="note"):
        load_ingredient_map(path)


def test_baguette_slices_are_weighed_by_the_reviewed_slice(resolver):
    item = weigh(resolver, "24 baguette slices")
    assert item.ndb_no == "18029" and item.grams == pytest.approx(24 * 25)
