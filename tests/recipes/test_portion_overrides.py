"""Reviewed portion weights (``portion_overrides`` in the ingredient map): an SR28 portion
replaced by grams a note cites, for a food however a line reaches it.

Lines are written for these tests; each expected weight was worked out by hand from SR28's
WEIGHT table and the override's note (the reason beside each).
"""

from __future__ import annotations

import pytest

from nutrireason.errors import DataError
from nutrireason.recipes.rules import load_ingredient_map


@pytest.mark.parametrize(("line", "grams", "why"), [
    ("4 boneless skinless chicken breasts", 4 * 272.0, "a counted breast is SR28's piece (272 g), "
     "as the reading protocol weighs a count; no override replaces it"),
    ("2 chicken breasts, cut into strips", 2 * 272.0, "the plain name reaches the same entry"),
    ("1 boneless chicken breast", 272.0, "'boneless chicken' names the same entry"),
    ("2 grilled chicken breasts", 2 * 196.0, "a grilled breast is SR28's grilled entry's 196 g "
     "cooked piece"),
    ("2 chicken breasts (400 g)", 400.0, "a stated mass still wins over any piece"),
    ("1 lb chicken breasts", 453.6, "a mass is no count"),
])
def test_counted_chicken_breasts(resolver, line, grams, why):
    assert resolver.ingredient(line).grams == pytest.approx(grams, rel=0.01), why


def test_every_override_names_an_sr28_food_and_a_portion_it_has(sr28):
    # an override replaces a portion SR28 gives the food; a misspelt measure word would add a
    # portion nothing asks for and leave SR28's in place
    reviewed = load_ingredient_map()
    words = {(ndb, str(measure).split()[0].lower())
             for ndb, measure in zip(sr28.weights["ndb_no"], sr28.weights["measure"],
                                     strict=True)}
    foods = set(sr28.foods["ndb_no"])
    for ndb, portions in reviewed.weight_overrides.items():
        assert ndb in foods
        for portion in portions:
            assert (ndb, portion) in words, (ndb, portion)


@pytest.mark.parametrize(("row", "field"), [
    ('{ndb_no: "5062", portion: piece, grams: 170, note: "n"}', "ndb_no"),
    ('{ndb_no: "05062", portion: "", grams: 170, note: "n"}', "portion"),
    ('{ndb_no: "05062", portion: piece, grams: 0, note: "n"}', "grams"),
    ('{ndb_no: "05062", portion: piece, grams: true, note: "n"}', "grams"),
    ('{ndb_no: "05062", portion: piece, grams: 170}', "note"),
])
def test_a_bad_override_is_refused_with_its_field(tmp_path, row, field):
    path = tmp_path / "map.yaml"
    path.write_text(f"entries: []\nportion_overrides:\n  - {row}\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_ingredient_map(path)
    assert f"portion_overrides[0].{field}" in str(caught.value)


def test_a_portion_overridden_twice_is_refused(tmp_path):
    path = tmp_path / "map.yaml"
    row = '{ndb_no: "05062", portion: piece, grams: 170, note: "n"}'
    path.write_text(f"entries: []\nportion_overrides:\n  - {row}\n  - {row}\n",
                    encoding="utf-8")
    with pytest.raises(DataError, match="twice"):
        load_ingredient_map(path)


@pytest.mark.parametrize(("line", "description", "grams", "why"), [
    ("1 can low sodium diced tomatoes",
     "Tomatoes, red, ripe, canned, packed in tomato juice, no salt added", 411.0,
     "'low sodium' spelled apart is a qualifier, not a food word before 'tomatoes' (the line "
     "was unmatched); the unsalted can is the same 14.5 oz can"),
    ("1 can no-salt-added diced tomatoes",
     "Tomatoes, red, ripe, canned, packed in tomato juice, no salt added", 411.0,
     "SR28 weighs both cans at 190 g"),
])
def test_unsalted_canned_tomatoes(resolver, line, description, grams, why):
    item = resolver.ingredient(line)
    assert (item.sr28_description, item.grams) == (description, pytest.approx(grams)), why
