"""One food interface for the NGQA build, whether foods come from FNDDS or from recipes:
``foods`` (food_id, description, category, source, the 16 nutrients per 100 g) and
``ingredients`` (food_id, seq, ingredient_code, ingredient_description, grams).

Ingredient codes share one namespace: ``sr:<NDB number>`` for USDA SR foods (FNDDS uses the SR
number as its ingredient code, so a recipe ingredient matched to SR28 food 01001 and an FNDDS
ingredient 1001 are the same ``sr:1001``) and ``fndds:<food code>`` for nested FNDDS foods."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nutrireason.recipes.schema import ResolvedRecipe
from nutrireason.sources.fndds import Fndds
from nutrireason.sources.nutrients import NUTRIENT_NAMES

FOOD_COLUMNS = ["food_id", "description", "category", "category_code", "source",
                *NUTRIENT_NAMES]
INGREDIENT_COLUMNS = ["food_id", "seq", "ingredient_code", "ingredient_description", "grams"]


@dataclass
class FoodTables:
    """Foods and their ingredients, in the shared shape."""

    foods: pd.DataFrame
    ingredients: pd.DataFrame


def recipe_foods(recipes: list[ResolvedRecipe]) -> FoodTables:
    """Kept recipes as foods: id ``recipe:<id>``, SR28 ingredients with grams."""
    foods, parts = [], []
    for recipe in recipes:
        if not recipe.kept or recipe.nutrition is None:
            continue
        food_id = f"recipe:{recipe.record.id}"
        foods.append({"food_id": food_id, "description": recipe.record.title,
                      "category": recipe.food_category, "category_code": None,
                      "source": "recipe",
                      **recipe.nutrition.per_100g})
        weighed = [i for i in recipe.ingredients if i.grams and i.ndb_no]
        for seq, item in enumerate(weighed, start=1):
            parts.append({"food_id": food_id, "seq": seq, "ingredient_code": sr_code(item.ndb_no),
                          "ingredient_description": item.sr28_description,
                          "grams": item.grams})
    return FoodTables(pd.DataFrame(foods, columns=FOOD_COLUMNS),
                      pd.DataFrame(parts, columns=INGREDIENT_COLUMNS))


def sr_code(ndb_no: str | int) -> str:
    """The shared ingredient id of an SR food: ``sr:<number without leading zeros>``."""
    return f"sr:{int(ndb_no)}"


def fndds_foods(fndds: Fndds) -> FoodTables:
    """FNDDS survey foods in the same shape (category = WWEIA category description)."""
    foods = fndds.foods.merge(fndds.nutrients, on="food_code", how="left")
    foods = foods.assign(food_id="fndds:" + foods["food_code"].astype(str), source="fndds")
    parts = fndds.ingredients.assign(
        food_id="fndds:" + fndds.ingredients["food_code"].astype(str),
        ingredient_code=fndds.ingredients["ingredient_code"].map(
            lambda code: f"fndds:{code}" if code > 10_000_000 else sr_code(code)))
    return FoodTables(foods[FOOD_COLUMNS].reset_index(drop=True),
                      parts[INGREDIENT_COLUMNS].reset_index(drop=True))
