"""The NGQA food side: the paper's food universe, keyword de-duplication, nutrient tags."""

from __future__ import annotations

import re

import pandas as pd

from nutrireason.ngqa.config import NgqaConfig
from nutrireason.recipes.foods import FoodTables
from nutrireason.recipes.nutrition import nutrient_tags
from nutrireason.standards import Standards


def in_universe(foods: pd.DataFrame, config: NgqaConfig) -> pd.Series:
    """FNDDS foods in the kept WWEIA ranges; recipe foods in the kept groups."""
    universe = config.food_universe
    codes = pd.to_numeric(foods["category_code"], errors="coerce")
    keep = pd.Series(False, index=foods.index)
    for rng in universe.wweia_ranges:
        keep |= codes.between(rng.from_, rng.to)
    recipe = foods["source"].eq("recipe") & foods["category"].isin(universe.recipe_groups)
    return (keep & foods["source"].eq("fndds")) | recipe


def dedup_key(description: str, ignore: set[str]) -> str:
    """The keyword set a description reduces to (order and filler words ignored)."""
    words = {w for w in re.findall(r"[a-z]+", description.lower()) if w not in ignore}
    return " ".join(sorted(words)) or description.lower()


def food_tags(row: pd.Series, standards: Standards) -> list[str]:
    """low_<tag> / high_<tag> for every nutrient whose value per 100 g crosses a threshold."""
    values = {n.id: None if pd.isna(row.get(n.id)) else float(row.get(n.id))
              for n in standards.nutrients.nutrients}
    return nutrient_tags(values, dict.fromkeys(values, 1.0), standards, min_coverage=0.0)


def question_foods(tables: FoodTables, config: NgqaConfig, standards: Standards) -> pd.DataFrame:
    """Foods for questions, sorted by id: universe, de-duplicated, with their tags.

    Columns: food_id, description, category, source, tags (all 16 nutrients), question_tags
    (the nutrients questions show, in the case studies' order), ingredients (descriptions).
    """
    foods = tables.foods[in_universe(tables.foods, config)].sort_values("food_id")
    ignore = set(config.dedup.ignore_words)
    foods = foods.assign(key=foods["description"].map(lambda d: dedup_key(str(d), ignore)))
    foods = foods.drop_duplicates("key", keep="first").drop(columns="key")
    tags = [food_tags(row, standards) for _, row in foods.iterrows()]
    shown = {f"{d}_{n}": i for i, n in enumerate(config.question_nutrients)
             for d in ("low", "high")}
    ingredients = _ingredient_lists(tables.ingredients)
    return pd.DataFrame({
        "food_id": foods["food_id"].to_numpy(),
        "description": foods["description"].astype(str).to_numpy(),
        "category": foods["category"].astype(str).to_numpy(),
        "source": foods["source"].to_numpy(),
        "tags": tags,
        "question_tags": [sorted((t for t in ts if t in shown), key=shown.get) for ts in tags],
        "ingredients": [ingredients.get(f, []) for f in foods["food_id"]],
    })


def _ingredient_lists(parts: pd.DataFrame) -> dict[str, list[str]]:
    ordered = parts.sort_values(["food_id", "seq"])
    lists: dict[str, list[str]] = {}
    for food_id, description in ordered[["food_id", "ingredient_description"]].itertuples(
            index=False):
        names = lists.setdefault(food_id, [])
        if description not in names:
            names.append(str(description))
    return lists
