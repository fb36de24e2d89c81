"""The build set beside an independent (hand) reading of the same recipes: records and files
written for the test, figures worked out by hand in the comments."""

from __future__ import annotations

import json

import pytest

from nutrireason.errors import DataError
from nutrireason.recipes.validation import (
    RecipeComparison,
    build_totals,
    independent_agreement,
    read_independent,
    read_readings,
    reading_agreement,
)


def recipe(ident: str, published: dict, computed: dict, kept: bool = True) -> RecipeComparison:
    return RecipeComparison(id=ident, title=ident, kept=kept, exclusion=None, flags=[],
                            published=published, computed=computed)


def test_agreement_scores_both_readings_on_the_recipes_the_reading_covers():
    comparisons = [
        # published 500: build 600 (20 % off, within), reading 550 (10 %)
        recipe("a", {"calories": 500.0, "protein": 20.0, "sodium": 400.0},
               {"calories": 600.0, "protein": 30.0, "sodium": 400.0}),
        # published 400: build 420 (5 %), reading 600 (50 %)
        recipe("b", {"calories": 400.0, "protein": 10.0, "sodium": None},
               {"calories": 420.0, "protein": 10.0, "sodium": 900.0}),
        # not kept, and not covered: neither is counted
        recipe("c", {"calories": 300.0}, {"calories": 900.0}, kept=False),
        recipe("d", {"calories": 300.0}, {"calories": 900.0}),
    ]
    independent = {"a": {"calories": 550.0, "protein": 20.0, "sodium": 400.0},
                   "b": {"calories": 600.0, "protein": 10.0, "sodium": 800.0},
                   "c": {"calories": 300.0, "protein": None, "sodium": None}}
    figures = independent_agreement(comparisons, independent)
    assert figures["recipes"] == 2
    calories = figures["nutrients"]["calories"]
    assert calories["independent"]["median_error"] == pytest.approx((0.10 + 0.50) / 2)
    assert calories["independent"]["within_20"] == pytest.approx(0.5)
    assert calories["build"]["median_error"] == pytest.approx((0.20 + 0.05) / 2)
    assert calories["build"]["within_20"] == pytest.approx(1.0)
    # build vs reading: |600-550|/550 = 0.0909, |420-600|/600 = 0.30
    gap = calories["build_vs_independent"]
    assert gap["median"] == pytest.approx((50 / 550 + 0.30) / 2)
    assert (gap["n"], gap["further"]) == (2, 1)
    # protein: build 50 % and 0 % off, the reading 0 % on both
    protein = figures["nutrients"]["protein"]
    assert protein["independent"]["median_error"] == pytest.approx(0.0)
    assert protein["build"]["median_error"] == pytest.approx(0.25)
    # sodium: only "a" publishes it; the gap still covers both recipes (900 vs 800)
    sodium = figures["nutrients"]["sodium"]
    assert sodium["build"]["n"] == sodium["independent"]["n"] == 1
    assert sodium["build_vs_independent"]["n"] == 2


def test_read_independent_takes_the_figures_and_ignores_the_lines(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps([
        {"id": "x", "servings": 4, "lines": [{"line": "1 cup flour", "grams": 125}],
         "per_serving": {"calories": 455, "protein": 12.9, "sodium": None, "sugar": 0.3}},
    ]), encoding="utf-8")
    assert read_independent(path) == {"x": {"calories": 455.0, "protein": 12.9,
                                            "sodium": None}}


@pytest.mark.parametrize(("rows", "field", "value"), [
    ([{"id": "x", "per_serving": {"calories": "455"}}], "[0].per_serving.calories", "455"),
    ([{"id": "x", "per_serving": {"calories": 1, "protein": -2}}],
     "[0].per_serving.protein", -2),
    ([{"id": "x", "per_serving": {"sodium": True}}], "[0].per_serving.sodium", True),
    ([{"id": "x", "per_serving": {}}, {"per_serving": {}}], "[1]", None),
    ([{"id": "x", "per_serving": [455]}], "[0]", None),
])
def test_read_independent_names_the_bad_field(tmp_path, rows, field, value):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_independent(path)
    assert caught.value.field == field and caught.value.value == value
    assert str(path) in str(caught.value)


def test_read_independent_refuses_a_file_that_is_not_a_list(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text('{"id": "x"}', encoding="utf-8")
    with pytest.raises(DataError, match="top level must be a list"):
        read_independent(path)
    with pytest.raises(DataError, match="cannot read"):
        read_independent(tmp_path / "missing.json")


# ------------------------------------------------------------- whole-recipe readings


def built(ident: str, kept: bool, lines: list[tuple[str | None, float | None]],
          per_100g: dict) -> dict:
    """A recipes.jsonl row: (ndb, grams) lines and per-100 g values."""
    return {"record": {"id": ident}, "kept": kept, "exclusion": None if kept else "unresolved",
            "ingredients": [{"ndb_no": ndb, "grams": grams} for ndb, grams in lines],
            "nutrition": {"per_100g": per_100g}}


def test_build_totals_are_per_100g_over_the_weighed_resolved_mass():
    # 300 g + 200 g weighed and resolved; the unresolved and unweighed lines carry no mass
    row = built("a", True, [("01001", 300.0), ("11282", 200.0), (None, 50.0), ("02047", None)],
                {"calories": 120.0, "protein": 4.0, "sodium": None})
    assert build_totals(row) == {"calories": 600.0, "protein": 20.0, "sodium": None}


def test_reading_agreement_counts_kept_and_distance_on_whole_recipes(tmp_path):
    path = tmp_path / "reading.json"
    path.write_text(json.dumps([
        {"id": "a", "servings": 4, "total": {"calories": 570.0, "protein": 20.0, "sodium": 0}},
        {"id": "b", "servings": None, "total": {"calories": 1000.0, "protein": 10.0,
                                                "sodium": 500.0}},
        {"id": "c", "servings": 2, "total": {"calories": 300.0, "protein": 1.0, "sodium": 1.0}},
        {"id": "missing", "servings": 2, "total": {"calories": 1.0}},
        ]), encoding="utf-8")
    readings = read_readings(path)
    rows = [built("a", True, [("x", 500.0)], {"calories": 120.0, "protein": 4.0,
                                              "sodium": 10.0}),   # 600 kcal: 5.3 % off
            built("b", True, [("x", 1000.0)], {"calories": 130.0, "protein": 1.0,
                                               "sodium": 50.0}),  # 1,300 kcal: 30 % off
            built("c", False, [], {}), built("other", True, [("x", 1.0)], {"calories": 1.0})]
    figures = reading_agreement(rows, readings)
    assert (figures["read"], figures["found"], figures["kept"]) == (4, 3, 2)
    assert figures["excluded"] == [("c", "unresolved")]
    calories = figures["nutrients"]["calories"]
    assert calories["n"] == 2 and calories["within"] == 0.5
    assert calories["median"] == pytest.approx((30 / 570 + 0.3) / 2)
    assert calories["further"] == [("b", 1300.0, 1000.0)]
    # a reading of 0 mg sodium gives no relative distance: only "b" is compared
    assert figures["nutrients"]["sodium"]["n"] == 1


@pytest.mark.parametrize(("row", "field"), [
    ({"id": "a"}, "[0]"),
    ({"id": "a", "total": {"calories": -1}}, "[0].total.calories"),
    ({"id": "a", "servings": 0, "total": {}}, "[0].servings"),
])
def test_a_bad_reading_names_the_field(tmp_path, row, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_readings(path)
    assert field in str(caught.value) and "bad.json" in str(caught.value)
