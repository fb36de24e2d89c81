"""The benchmark's split of kept recipes by how their energy was weighed (hand-made records)."""

from __future__ import annotations

import pytest

from nutrireason.recipes.validation import RecipeComparison, by_weighing, stated_mass_share

KCAL = {"20081": 364.0, "04053": 884.0, "11282": 40.0}


def recipe(ident: str, lines: list[dict], kept: bool = True) -> RecipeComparison:
    return RecipeComparison(id=ident, title=ident, kept=kept, exclusion=None, flags=[],
                            published={"calories": 500.0}, computed={"calories": 520.0},
                            lines=lines)


def test_stated_mass_share_weights_lines_by_their_energy():
    item = recipe("a", [
        {"grams": 100.0, "ndb_no": "20081", "grams_method": "mass:gram"},  # 364 kcal
        {"grams": 13.5, "ndb_no": "04053", "grams_method": "sr28_weight:1 tbsp=13.5 g"},
        {"grams": 110.0, "ndb_no": "11282", "grams_method": "sr28_weight:1 medium=110 g"},
        {"grams": None, "ndb_no": None, "grams_method": None},  # unresolved: no energy
    ])
    # 364 of 364 + 119.3 + 44 kcal
    assert stated_mass_share(item, KCAL) == pytest.approx(364 / (364 + 119.34 + 44))
    assert stated_mass_share(recipe("b", []), KCAL) is None


def test_by_weighing_splits_kept_recipes_at_the_threshold():
    weighed = recipe("w", [{"grams": 200.0, "ndb_no": "20081", "grams_method": "mass:gram"}])
    counted = recipe("c", [{"grams": 110.0, "ndb_no": "11282",
                            "grams_method": "sr28_weight:1 medium=110 g"}])
    dropped = recipe("d", [{"grams": 200.0, "ndb_no": "20081", "grams_method": "mass:gram"}],
                     kept=False)
    split = by_weighing([weighed, counted, dropped], KCAL)
    assert split["stated_masses"]["kept"] == 1 and split["other"]["kept"] == 1
    assert split["stated_masses"]["nutrients"]["calories"]["median_error"] == \
        pytest.approx(0.04)
