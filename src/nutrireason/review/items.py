"""What a reviewer sees: one FAM-Bench pool entry (recipe x condition) with the proposed label,
its rationale ingredients, the provenance of the rules that fired, and the recipe itself; or
one NGQA question (user x food) with its gold answer and the graph links it rests on."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.reviewfile import item_key

BENCHMARK = "fam"
SIDES = {"rec": "Rec", "not_rec": "NotRec"}
# Nutrients shown beside each recipe (per serving and per 100 g), before those any rule reads.
SHOWN_NUTRIENTS = ("calories", "protein", "carbohydrates", "sugar", "fiber", "total_fat",
                   "saturated_fat", "sodium", "potassium", "phosphorus", "calcium", "iron",
                   "cholesterol")


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
    units: dict[str, str] = field(default_factory=dict)
    instructions: tuple[str, ...] = ()
    serving_note: str = ""
    kb: Any = None  # the condition's knowledge-base entry (FAM-Bench), for list sources

    @cached_property
    def rules(self) -> list[Any]:
        """The rule hits with value, threshold and source (:mod:`.provenance`)."""
        from nutrireason.review.provenance import rule_rows

        return rule_rows(list(self.provenance), self.kb) if self.benchmark == BENCHMARK else []

    @cached_property
    def notes(self) -> list[str]:
        from nutrireason.review.provenance import provenance_notes

        return provenance_notes(list(self.provenance)) if self.benchmark == BENCHMARK else []

    @cached_property
    def impossible(self) -> list[str]:
        from nutrireason.review.provenance import impossible_nutrition

        return impossible_nutrition(self.per_100g)

    @property
    def line_foods(self) -> list[tuple[str, str]]:
        """(recipe line, its ingredient name) for every line."""
        foods = list(self.foods) + [""] * (len(self.lines) - len(self.foods))
        return list(zip(self.lines, foods, strict=False))

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
               names: Callable[[dict[str, Any]], list[str]] = parsed_foods,
               derived: Callable[[dict[str, Any]], dict[str, float | None]] | None = None,
               kb: dict[str, Any] | None = None) -> list[ReviewItem]:
    """Every Rec/NotRec entry of the pool, recipe by recipe in pool order, conditions in
    entry order; ``names`` gives each recipe line's ingredient name (the FAM vocabulary's
    canonical names in ``review serve``, which the pool's rationales use); ``derived`` the
    nutrients per 100 g the recipe table lacks (total fat, summed over the weighed lines);
    ``kb`` the conditions' knowledge base (default: the packaged one), for the sources."""
    from nutrireason.fam.instances import veto_nutrients
    from nutrireason.fam.kb import load_kb, nutrient_units

    kb = kb if kb is not None else load_kb()
    shown = tuple(dict.fromkeys([*SHOWN_NUTRIENTS, *veto_nutrients(kb)]))
    units = nutrient_units()
    resolved = {r["record"]["id"]: r for r in read_jsonl(recipes)}
    items = []
    for row in read_jsonl(annotations):
        recipe = resolved.get(row.get("recipe_id"))
        if recipe is None:
            continue
        record = recipe["record"]
        per_100g, per_serving = _nutrition(recipe, derived, shown)
        foods = tuple(names(recipe))
        for side, label in SIDES.items():
            for entry in row.get(side) or []:
                provenance = tuple(entry.get("provenance") or [])
                items.append(ReviewItem(
                    item_key(row["recipe_id"], entry["condition"]), row["recipe_id"],
                    entry["condition"], label, tuple(entry.get("ingredients") or []),
                    provenance, clean(record.get("title", "")),
                    tuple(clean(line) for line in record.get("ingredients") or []),
                    record.get("servings"), foods, per_serving, per_100g, units=units,
                    instructions=tuple(clean(step) for step in _steps(record)),
                    serving_note=_serving_note(record, provenance),
                    kb=kb.get(entry["condition"])))
    return items


def clean(text: Any) -> str:
    """Text as a person reads it: HTML entities decoded ("&amp;" is "&"), runs of blanks one
    space (the page escapes whatever is left)."""
    import html

    return re.sub(r"\s+", " ", html.unescape(str(text or ""))).strip()


def _steps(record: dict[str, Any]) -> list[str]:
    steps = record.get("instructions") or []
    return [steps] if isinstance(steps, str) else [str(step) for step in steps]


def _nutrition(recipe: dict[str, Any],
               derived: Callable[[dict[str, Any]], dict[str, float | None]] | None,
               shown: tuple[str, ...]) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """(per 100 g, per serving) of the shown nutrients, with the derived ones added."""
    nutrition = recipe.get("nutrition") or {}
    per_100g = dict(nutrition.get("per_100g") or {})
    per_serving = dict(nutrition.get("per_serving") or {})
    servings = recipe["record"].get("servings")
    total = nutrition.get("total_grams")
    for name, value in (derived(recipe) if derived else {}).items():
        per_100g.setdefault(name, value)
        if value is not None and servings and total and per_serving:
            per_serving.setdefault(name, value * total / servings / 100)
    keep = [name for name in shown if name in per_100g or name in per_serving]
    return ({n: per_100g.get(n) for n in keep} if per_100g else {},
            {n: per_serving.get(n) for n in keep} if per_serving else {})


def _serving_note(record: dict[str, Any], provenance: tuple[dict[str, Any], ...]) -> str:
    """What the rules assumed for a serving when the recipe gives no servings."""
    if record.get("servings"):
        return ""
    for step in provenance:
        if step.get("serving_range_g"):
            low, high = step["serving_range_g"]
            return f"The recipe gives no servings: the rules judge a serving of {low:g}-" \
                   f"{high:g} g (fam_rules.yaml portions, after FDA reference amounts)."
        assumed = re.search(r"x ([\d.]+) g serving", str(step.get("basis", "")))
        if assumed:
            return f"The recipe gives no servings: the rules judged the limit at a serving " \
                   f"of {float(assumed.group(1)):g} g (fam_rules.yaml portions, after FDA " \
                   "reference amounts)."
    return "The recipe gives no servings: per-serving limits are judged over the typical " \
           "serving range of fam_rules.yaml (after FDA reference amounts)."


def _sentence(step: dict[str, Any]) -> str:
    """One provenance step in words: a rule on a line, a nutrient against its limit, or a
    graph triple (with its ``text`` where the loader wrote one)."""
    if step.get("text"):
        return str(step["text"])
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
