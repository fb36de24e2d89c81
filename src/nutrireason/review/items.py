"""What a reviewer sees: one FAM-Bench pool entry (recipe x condition) with the proposed label,
its rationale ingredients, the provenance of the rules that fired, and the recipe itself; or
one NGQA question (user x food) with its gold answer and the graph links it rests on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.reviewfile import item_key

BENCHMARK = "fam"
SIDES = {"rec": "Rec", "not_rec": "NotRec"}
# Nutrients shown beside each recipe (per serving and per 100 g).
SHOWN_NUTRIENTS = ("calories", "protein", "carbohydrates", "sugar", "fiber", "fat",
                   "saturated_fat", "sodium", "potassium", "cholesterol")


@dataclass(frozen=True)
class ReviewItem:
    """One entry as proposed by the rules: a (recipe, condition) entry of the FAM-Bench pool,
    or an NGQA (user, food) question (``recipe_id`` is then the food, ``condition`` the
    level)."""

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
    benchmark: str = BENCHMARK
    question: str = ""
    lines_heading: str = "Ingredients"

    @property
    def evidence(self) -> list[str]:
        """The provenance as sentences."""
        return [_sentence(p) for p in self.provenance]

    @property
    def proposed(self) -> dict[str, Any]:
        return {"label": self.label, "ingredients": list(self.ingredients),
                "group": self.condition}


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


def _sentence(step: dict[str, Any]) -> str:
    """One provenance step in words: a rule on a line, a nutrient against its limit, or a
    graph triple."""
    if "relation" in step:
        return f"{step['source']} -- {step['relation']} --> {step['target']}"
    text = f"rule {step.get('rule', '?')}"
    if step.get("ingredient"):
        text += f": {step['ingredient']}"
    if step.get("line"):
        text += f" (line \"{step['line']}\")"
    if step.get("concept"):
        text += f"; knowledge base: {step.get('kb_side', '')} {step['concept']}"
    if step.get("nutrient"):
        amount = step.get("per_serving", step.get("per_100g"))
        text += f"; {step['nutrient']} {amount} {step.get('unit', '')} against {step.get('max')}"
    return text


def load_ngqa_items(questions: Path) -> list[ReviewItem]:
    """Every NGQA question pair of a build (``questions.parquet``), by level then id: the
    binary gold answer, the user's requirements and the graph's triples, links first."""
    import pandas as pd

    if not questions.is_file():
        raise DataError(questions, "file not found", expected="an `ngqa build` folder")
    items = []
    for row in pd.read_parquet(questions).to_dict(orient="records"):
        triples = [list(t) for t in row["triples"]]
        links = [t for t in triples if t[1] in ("match", "contradict", "need")]
        ordered = links + [t for t in triples if t not in links]
        requirements = [f"condition: {c}" for c in row["conditions"]] + \
            [f"diet: {d}" for d in row["diets"]]
        items.append(ReviewItem(
            item_key(str(row["user_id"]), str(row["food_id"])), str(row["food_id"]),
            str(row["level"]), str(row["answer_binary"]), (),
            tuple({"source": h, "relation": r, "target": t} for h, r, t in ordered),
            str(row["food"]), tuple(requirements), None, benchmark="ngqa",
            question=str(row["question_binary"]), lines_heading="The user"))
    return items
