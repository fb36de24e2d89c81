"""Recipe nutrition: totals from SR28 per-100 g values and grams, per 100 g and per serving,
nutrient tags by the standards' thresholds, dietary tags from those."""

from __future__ import annotations

import math

from nutrireason.recipes.schema import RecipeNutrition, ResolvedIngredient
from nutrireason.standards import Standards


def recipe_nutrition(ingredients: list[ResolvedIngredient],
                     nutrients: dict[str, dict[str, float]],
                     servings: float | None, standards: Standards,
                     min_coverage: float) -> RecipeNutrition:
    """Sum the 16 nutrients over weighed, matched ingredients.

    ``nutrients`` maps ndb_no to {nutrient: value per 100 g, NaN when SR28 has none}. A
    nutrient SR28 lacks for an ingredient, or one the line leaves unknown
    (``unknown_nutrients``), counts as unknown mass; ``coverage`` is the share of
    grams with a known value, and a nutrient has a value (and a tag) only when its coverage
    reaches ``min_coverage``.
    """
    names = [n.id for n in standards.nutrients.nutrients]
    weighed = [i for i in ingredients if i.grams and i.ndb_no]
    total = sum(i.grams for i in weighed)
    sums = dict.fromkeys(names, 0.0)
    known = dict.fromkeys(names, 0.0)
    for item in weighed:
        values = nutrients[item.ndb_no]
        for name in names:
            value = values[name]
            if not math.isnan(value) and name not in item.unknown_nutrients:
                sums[name] += float(value) * item.grams / 100
                known[name] += item.grams
    coverage = {n: (known[n] / total if total else 0.0) for n in names}
    # a nutrient known for under ``min_coverage`` of the mass is unknown: spread over the rest
    # of the dish, a few foods' values say nothing of it (a tablespoon of marmalade's sugar
    # over a squash SR28 gives no sugar for read as 47 g per 100 g, above its carbohydrate)
    covered = {n for n in names if known[n] and coverage[n] >= min_coverage}
    per_100g = {n: (_round(sums[n] / known[n] * 100) if n in covered else None) for n in names}
    per_serving = None
    if servings:
        per_serving = {n: (_round(sums[n] / coverage[n] / servings) if n in covered else None)
                       for n in names}
    tags = nutrient_tags(per_100g, coverage, standards, min_coverage)
    return RecipeNutrition(total_grams=_round(total), per_100g=per_100g,
                           per_serving=per_serving,
                           coverage={n: _round(v) for n, v in coverage.items()},
                           nutrient_tags=tags, dietary_tags=[t.replace("_", " ") for t in tags])


def nutrient_tags(per_100g: dict[str, float | None], coverage: dict[str, float],
                  standards: Standards, min_coverage: float) -> list[str]:
    """low_<tag> when value <= low threshold, high_<tag> when >= high, for covered nutrients."""
    tags = []
    for nutrient in standards.nutrients.nutrients:
        value = per_100g.get(nutrient.id)
        if value is None or coverage.get(nutrient.id, 0.0) < min_coverage:
            continue
        if value <= nutrient.low.value:
            tags.append(f"low_{nutrient.tag}")
        elif value >= nutrient.high.value:
            tags.append(f"high_{nutrient.tag}")
    return tags


def _round(value: float) -> float:
    """Six significant digits: stable across platforms, enough for nutrition."""
    return float(f"{value:.6g}") if math.isfinite(value) else value
