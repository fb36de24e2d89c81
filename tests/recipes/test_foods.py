"""Recipe foods and FNDDS foods come out in one shape, with one ingredient-code namespace."""

from __future__ import annotations

from nutrireason.recipes.foods import FOOD_COLUMNS, INGREDIENT_COLUMNS, fndds_foods, recipe_foods
from nutrireason.recipes.schema import RecipeRecord
from nutrireason.sources.fndds import read_fndds
from tests.sources.test_fndds import HEADERS_2017, _ingredient_rows, _nutrient_rows, _write_book


def test_fndds_and_recipe_foods_share_columns_and_codes(tmp_path, resolver):
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": _nutrient_rows(HEADERS_2017)})
    _write_book(tmp_path / "i.xlsx",
                {"FNDDS Ingredients": _ingredient_rows("Ingredient weight (g)")})
    survey = fndds_foods(read_fndds(tmp_path))
    recipe = resolver.recipe(RecipeRecord(id="pizza", title="Cheese pizza", ingredients=[
        "250 g flour", "122 g whole milk"]))
    ours = recipe_foods([recipe])
    for tables in (survey, ours):
        assert list(tables.foods.columns) == FOOD_COLUMNS
        assert list(tables.ingredients.columns) == INGREDIENT_COLUMNS
    assert set(survey.ingredients["ingredient_code"]) == {"sr:1077", "fndds:11111000", "sr:20081"}
    assert set(ours.ingredients["ingredient_code"]) == {"sr:20081", "sr:1077"}
    assert ours.foods.loc[0, "category"] == "mixed dishes"  # as WWEIA files pizza
