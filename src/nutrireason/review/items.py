"""What a reviewer sees: one FAM-Bench pool entry (recipe x condition) with the proposed label,
its rationale ingredients, the provenance of the rules that fired, and the recipe itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.fam.reviews import item_key

BENCHMARK = "fam"
SIDES = {"rec": "Rec", "not_rec": "NotRec"}
# Nutrients shown beside each recipe (per serving and per 100 g).
SHOWN_NUTRIENTS = ("calories", "protein", "carbohydrates", "sugar", "fiber", "fat",
                   "saturated_fat", "sodium", "potassium", "cholesterol")


@dataclass(frozen=True)
class ReviewItem:
    """One (recipe, condition) entry of the annotation pool, as proposed by the rules."""

    key: str
    recipe_id: str
    condition: str
    label: str  # Rec | NotRec, as proposed
    ingredients: tuple[str, ...]
    provenance: tuple[dict[str, Any], ...]
    title: str
    lines: tuple[str, ...]
    servings: float | None
    foods: tuple[str, ...] = ()  # each line's ingredient name ("" where none)
    per_serving: dict[str, float | None] = field(default_factory=dict)
    per_100g: dict[str, float | None] = field(default_factory=dict)

    @property
    def proposed(self) -> dict[str, Any]:
        return {"label": self.label, "ingredients": list(self.ingredients)}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    import json

    if not path.is_file():
        raise DataError(path, "file not found", expected="a finished build (run the stage first)")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(path, f"line {number} is not JSON: {exc.msg}") from exc
    return rows


def parsed_foods(recipe: dict[str, Any]) -> list[str]:
    """Each line's parsed food name (the default when no canonical namer is given)."""
    return [i.get("food") or "" for i in recipe.get("ingredients") or []]


def load_items(annotations: Path, recipes: Path,
               names: Callable[[dict[str, Any]], list[str]] = parsed_foods) -> list[ReviewItem]:
    """Every Rec/NotRec entry of the pool, recipe by recipe in pool order, conditions in
    entry order; ``names`` gives each recipe line's ingredient name (the FAM vocabulary's
    canonical names in ``review serve``, which the pool's rationales use)."""
    resolved = {r["record"]["id"]: r for r in read_jsonl(recipes)}
    items = []
    for row in read_jsonl(annotations):
        recipe = resolved.get(row.get("recipe_id"))
        if recipe is None:
            continue
        record, nutrition = recipe["record"], recipe.get("nutrition") or {}
        foods = tuple(names(recipe))
        for side, label in SIDES.items():
            for entry in row.get(side) or []:
                items.append(ReviewItem(
                    item_key(row["recipe_id"], entry["condition"]), row["recipe_id"],
                    entry["condition"], label, tuple(entry.get("ingredients") or []),
                    tuple(entry.get("provenance") or []), record.get("title", ""),
                    tuple(record.get("ingredients") or []), record.get("servings"),
                    foods,
                    _shown(nutrition.get("per_serving")), _shown(nutrition.get("per_100g"))))
    return items


def _shown(values: dict[str, Any] | None) -> dict[str, float | None]:
    values = values or {}
    return {name: values.get(name) for name in SHOWN_NUTRIENTS if name in values}
