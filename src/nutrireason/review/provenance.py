"""A FAM-Bench entry's provenance as a dietitian checks it: each rule hit with its value and
basis, the threshold it was held against and that threshold's cited source, the knowledge-base
list and side it comes from, the foods carrying a nutrient veto, and whether it was overruled;
and the nutrition itself checked for values that cannot be (sugar above carbohydrate,
saturated above total fat, energy far from its macronutrients)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

RELEASE_SOURCE = "FAM-Bench release condition_rules.json (CC BY 4.0)"
RULES_FILE = "standards/data/fam_rules.yaml"
LIST_RULES = ("ingredient_concept", "food_list", "unquantified_ingredient_concept",
              "unquantified_food_list")
NUTRIENT_RULES = ("nutrient_veto", "nutrient_veto_conflict", "portion_undecidable",
                  "unquantified_ingredient")
SIDE_THRESHOLD = {"limit": "limit_min_share", "beneficial": "beneficial_min_share"}
# Atwater factors (kcal per g) for the energy check, and how far the stated energy may stray.
ATWATER = {"protein": 4.0, "carbohydrates": 4.0, "total_fat": 9.0}
ENERGY_TOLERANCE = 0.25


@dataclass(frozen=True)
class RuleRow:
    """One rule hit in words: every field a reviewer needs to check it."""

    rule: str
    subject: str
    value: str
    threshold: str
    source: str
    side: str
    overruled: bool = False
    note: str = ""


@dataclass(frozen=True)
class RuleSources:
    """The amounts the rules use, each with its cited source (``fam_rules.yaml``)."""

    values: dict[str, float]
    sources: dict[str, str]

    def cite(self, name: str) -> str:
        return self.sources.get(name, RULES_FILE)


@lru_cache(maxsize=1)
def rule_sources() -> RuleSources:
    """The packaged ``fam_rules.yaml`` amounts with their sources (read once)."""
    from nutrireason.fam.annotate import load_rule_file
    from nutrireason.standards.loader import RuleValue

    found = {name: entry for name, entry in load_rule_file() if isinstance(entry, RuleValue)}
    return RuleSources({name: float(entry.value) for name, entry in found.items()},
                       {name: str(entry.source) for name, entry in found.items()})


def list_source(condition: Any, side: str, kind: str, name: str) -> str:
    """Where a food or concept on a condition's list comes from: the release, or the
    deviation that added or moved it there (its cited source)."""
    for deviation in getattr(condition, "deviations", []) or []:
        if deviation.side == side and deviation.item == name and deviation.change != "removed":
            return deviation.source
    return f"{RELEASE_SOURCE}, {side} {kind}s"


def rule_rows(provenance: list[dict[str, Any]], condition: Any = None) -> list[RuleRow]:
    """The rule hits of one entry (notes such as the fallback rationale are left out: see
    :func:`provenance_notes`)."""
    sources = rule_sources()
    rows = []
    for step in provenance:
        rule = step.get("rule", "")
        if rule in LIST_RULES:
            rows.append(_list_row(step, condition, sources))
        elif rule in NUTRIENT_RULES:
            rows.append(_nutrient_row(step))
    return rows


def provenance_notes(provenance: list[dict[str, Any]]) -> list[str]:
    """What the provenance says besides rule hits."""
    notes = []
    for step in provenance:
        rule = step.get("rule", "")
        if rule == "ingredient_fallback":
            notes.append("no ingredient carries the decisive nutrient on its own: the rationale "
                         f"names the largest contributors ({', '.join(step['ingredients'])})")
        elif rule == "recommend_withheld":
            notes.append("a recommendation is withheld: " + "; ".join(step.get("why") or []))
        elif rule in ("open_identity", "unresolved_decisive"):
            notes.append(f"{rule.replace('_', ' ')}: " + "; ".join(step.get("lines") or []))
    return notes


def _list_row(step: dict[str, Any], condition: Any, sources: RuleSources) -> RuleRow:
    side = step.get("kb_side", "")
    kind, name = ("concept", step["concept"]) if "concept" in step else \
        ("food", step.get("food", ""))
    subject = f"{step.get('ingredient', '')} (line: {step.get('line', '')})"
    listed = list_source(condition, side, kind, name)
    if step.get("dish_level") and "max_per_100g" in step:
        return RuleRow("dish as a whole", subject,
                       f"sodium {step['sodium_per_100g']:.0f} mg per 100 g",
                       f"at most {step['max_per_100g']:g} mg per 100 g",
                       sources.cite("lower_sodium_meal_max_mg_per_100g"),
                       f"{side} list, {kind} {name}", bool(step.get("overruled")))
    share = step.get("mass_share")
    value = "amount unknown (the line gives no quantity)" if share is None else \
        f"{share:.1%} of the recipe's mass"
    threshold, cited = _share_threshold(side, condition, sources)
    return RuleRow(f"{side} list ({kind})", subject, value, threshold,
                   f"list: {listed}; amount: {cited}", f"{side} list, {kind} {name}",
                   bool(step.get("overruled")))


def _share_threshold(side: str, condition: Any, sources: RuleSources) -> tuple[str, str]:
    if side == "avoid":
        if getattr(condition, "avoid_any_amount", None):
            return "any amount", str(condition.avoid_any_amount)
        trace = sources.values.get("trace_max_g", 0.5)
        return f"any amount from {trace:g} g per serving (less is a trace)", \
            sources.cite("trace_max_g")
    name = SIDE_THRESHOLD.get(side, "limit_min_share")
    return f"at least {sources.values.get(name, 0):.0%} of the mass", sources.cite(name)


def _nutrient_row(step: dict[str, Any]) -> RuleRow:
    unit, nutrient = step.get("unit", ""), step.get("nutrient", "")
    if step.get("value") is not None:
        value = f"{step['value']:.1f} {unit} {step.get('basis') or 'per ' + step.get('per', '')}"
    elif step.get("per_100g") is not None:
        value = f"{step['per_100g']:.1f} {unit} per 100 g"
        if step.get("serving_range_g"):
            low, high = step["serving_range_g"]
            value += f"; servings unknown (a serving of {low:g}-{high:g} g decides)"
    else:
        value = "unknown"
    limit = f"at most {step['max']:g}" if step.get("max") is not None else \
        f"at least {step.get('min', 0):g}"
    per = "100 g" if step.get("per") == "100g" else "serving"
    carriers = step.get("ingredients") or ([step["ingredient"]] if step.get("ingredient") else [])
    subject = f"{nutrient} of the dish" + (f", carried by {', '.join(carriers)}"
                                           if carriers else "")
    return RuleRow(f"nutrient limit ({step.get('rule', '').replace('_', ' ')})", subject,
                   value, f"{limit} {unit} per {per}",
                   str(step.get("source") or "the condition's knowledge-base limit"),
                   "nutrient limit", bool(step.get("overruled")), str(step.get("why") or ""))


def impossible_nutrition(per_100g: dict[str, float | None]) -> list[str]:
    """Values that cannot all be true: sugar above carbohydrate, saturated above total fat,
    or energy more than a quarter away from 4/4/9 kcal per g of its macronutrients."""
    found = []
    per_100g = {**per_100g, "total_fat": per_100g.get("total_fat", per_100g.get("fat"))}
    sugar, carbohydrate = per_100g.get("sugar"), per_100g.get("carbohydrates")
    if sugar is not None and carbohydrate is not None and sugar > carbohydrate + 0.5:
        found.append(f"sugar {sugar:.1f} g is above carbohydrate {carbohydrate:.1f} g per 100 g")
    saturated, fat = per_100g.get("saturated_fat"), per_100g.get("total_fat")
    if saturated is not None and fat is not None and saturated > fat + 0.5:
        found.append(f"saturated fat {saturated:.1f} g is above total fat {fat:.1f} g per 100 g")
    energy = per_100g.get("calories")
    parts = [per_100g.get(name) for name in ATWATER]
    if energy and all(p is not None for p in parts):
        expected = sum(float(p) * factor for p, factor in zip(parts, ATWATER.values(),
                                                              strict=True))
        if expected and abs(energy - expected) / expected > ENERGY_TOLERANCE:
            found.append(f"energy {energy:.0f} kcal per 100 g is far from its macronutrients "
                         f"({expected:.0f} kcal at 4/4/9 kcal per g)")
    return found
