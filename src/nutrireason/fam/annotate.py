"""Rule-grounded FAM-Bench annotation (paper section 3.3, Appendices E and F).

For a resolved recipe and each of the 13 conditions, three rule families decide Rec(d) /
NotRec(d) and the canonical ingredients E_h that drive the decision:

1. ingredient-concept consistency: an ingredient whose concepts the condition's knowledge base
   lists under ``avoid`` is NotRec evidence whatever its amount; under ``limit``, when it makes
   up at least ``limit_min_share`` of the recipe's mass; under ``beneficial``, Rec evidence when
   it makes up at least ``beneficial_min_share``;
2. nutrient-threshold vetoes: the recipe's own nutrition (per serving when servings are known,
   else per 100 g for limits stated per 100 g) above a condition's ceiling or below its floor is
   NotRec, with the ingredients that contribute most to that nutrient as evidence; without
   servings, a per-serving limit is checked over a plausible serving range (``portion_min_g``
   to ``portion_max_g``): broken over the whole range it is a veto, broken over part of it the
   condition's entry is excluded (Appendix F: portion size decisive but unavailable) unless
   other evidence already makes it NotRec;
3. ingredient fallback: a decision with no ingredient evidence is backfilled with the recipe's
   ingredients that are canonical instances of the condition's rule sets.

A condition is never on both sides: NotRec evidence wins and the overruled Rec evidence stays in
the provenance. Conditions with no evidence are omitted (neutral). Every entry records which
rule fired, on which ingredient or nutrient value, against which knowledge-base entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.fam.kb import ConditionKB, NutrientLimit
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.standards import standards_dir
from nutrireason.standards.loader import RuleValue, Source, _Strict, load_model

PORTION_REASON = "portion size decisive but unavailable"


@dataclass(frozen=True)
class Thresholds:
    """Amount thresholds for the concept rules (``standards/data/fam_rules.yaml``)."""

    limit_min_share: float
    beneficial_min_share: float
    contributors: int
    portion_min_g: float = 50.0
    portion_max_g: float = 350.0


class _Rules(_Strict):
    version: int
    source: Source
    limit_min_share: RuleValue
    beneficial_min_share: RuleValue
    contributors: RuleValue
    portion_min_g: RuleValue
    portion_max_g: RuleValue


def load_thresholds(path: Path | None = None) -> Thresholds:
    """The packaged (or given) ``fam_rules.yaml``."""
    rules = load_model(path or standards_dir() / "fam_rules.yaml", _Rules)
    return Thresholds(rules.limit_min_share.value, rules.beneficial_min_share.value,
                      int(rules.contributors.value), rules.portion_min_g.value,
                      rules.portion_max_g.value)


@dataclass
class Ingredient:
    """One weighed, matched ingredient with its canonical name and concepts."""

    line: str
    canonical: str
    concepts: frozenset[str]
    grams: float
    nutrients: dict[str, float]


@dataclass
class Decision:
    """One condition's side, its evidence ingredients and the rules behind it."""

    condition: str
    side: str  # "Rec", "NotRec" or "Excluded" (Appendix F: portion size decisive, unknown)
    ingredients: list[str]
    provenance: list[dict[str, Any]] = field(default_factory=list)


def recipe_ingredients(recipe: dict[str, Any], vocabulary: Vocabulary,
                       foods: dict[str, dict[str, Any]]) -> list[Ingredient]:
    """The recipe's weighed, matched ingredients (``recipes.jsonl`` shape) in order."""
    items = []
    for item in recipe["ingredients"]:
        ndb, grams = item.get("ndb_no"), item.get("grams")
        if not ndb or not grams:
            continue
        food = foods.get(ndb, {})
        entry = vocabulary.lookup(ndb, item.get("sr28_description") or food.get("description", ""),
                                  food.get("group_code", ""))
        items.append(Ingredient(item["line"], entry.canonical, entry.concepts, float(grams),
                                food.get("nutrients", {})))
    return items


def decide(condition: ConditionKB, items: list[Ingredient], nutrition: dict[str, Any] | None,
           thresholds: Thresholds) -> Decision | None:
    """Rec, NotRec or None (neutral) for one condition."""
    total = sum(i.grams for i in items) or 1.0
    against, support = _concept_evidence(condition, items, total, thresholds)
    vetoes, undecided = _nutrient_vetoes(condition, items, nutrition, thresholds)
    against += vetoes
    if against:
        return _finish(condition, "NotRec", against, support, items)
    if undecided:
        return Decision(condition.id, "Excluded", [], undecided)
    if support:
        return _finish(condition, "Rec", support, [], items)
    return None


def _concept_evidence(condition: ConditionKB, items: list[Ingredient], total: float,
                      thresholds: Thresholds) -> tuple[list[dict], list[dict]]:
    against, support = [], []
    for item in items:
        share = item.grams / total
        for concept in sorted(item.concepts):
            side = condition.side_of(concept)
            fired = {"rule": "ingredient_concept", "ingredient": item.canonical,
                     "line": item.line, "concept": concept, "kb_side": side,
                     "mass_share": round(share, 4)}
            if side == "avoid" or (side == "limit" and share >= thresholds.limit_min_share):
                against.append(fired)
            elif side == "beneficial" and share >= thresholds.beneficial_min_share:
                support.append(fired)
    return against, support


def _nutrient_vetoes(condition: ConditionKB, items: list[Ingredient],
                     nutrition: dict[str, Any] | None, thresholds: Thresholds
                     ) -> tuple[list[dict], list[dict]]:
    """(vetoes that fire, limits whose outcome hangs on an unknown serving size)."""
    if not nutrition:
        return [], []
    fired, undecided = [], []
    for limit in condition.nutrient_limits:
        value, basis = _limit_value(limit, nutrition)
        if value is None:
            per_100g = (nutrition.get("per_100g") or {}).get(limit.nutrient)
            if limit.per != "serving" or per_100g is None:
                continue
            value, basis, open_case = _portion_range(limit, float(per_100g), thresholds)
            if open_case is not None:
                undecided.append(open_case)
            if value is None:
                continue
        over = limit.max is not None and value > limit.max
        under = limit.min is not None and value < limit.min
        if not (over or under):
            continue
        contributors = _top_contributors(items, limit.nutrient, thresholds.contributors,
                                         highest=over)
        fired.append({"rule": "nutrient_veto", "nutrient": limit.nutrient,
                      "value": round(float(value), 3), "max": limit.max, "min": limit.min,
                      "per": limit.per, "unit": limit.unit, "source": limit.source,
                      "basis": basis, "ingredients": contributors})
    return fired, undecided


def _limit_value(limit: NutrientLimit, nutrition: dict[str, Any]) -> tuple[float | None, str]:
    table = nutrition.get("per_serving") if limit.per == "serving" else nutrition.get(
        "per_100g")
    value = (table or {}).get(limit.nutrient)
    return (None, "") if value is None else (float(value), f"per {limit.per}")


def _portion_range(limit: NutrientLimit, per_100g: float, thresholds: Thresholds
                   ) -> tuple[float | None, str, dict | None]:
    """A per-serving limit without servings: the amount in the smallest and largest plausible
    serving. Broken at both ends -> a veto (on the end that breaks it least); at one end only
    -> portion size is decisive (Appendix F); at neither -> nothing."""
    low_g, high_g = thresholds.portion_min_g, thresholds.portion_max_g
    small, large = per_100g * low_g / 100, per_100g * high_g / 100
    broken = (limit.violated_by(small), limit.violated_by(large))
    if all(broken):
        end = (small, low_g) if limit.max is not None else (large, high_g)
        return end[0], f"per 100 g x {end[1]:g} g serving (servings unknown)", None
    if any(broken):
        return None, "", {"rule": "portion_undecidable", "nutrient": limit.nutrient,
                          "per_100g": round(per_100g, 3), "max": limit.max, "min": limit.min,
                          "unit": limit.unit, "serving_range_g": [low_g, high_g],
                          "source": limit.source}
    return None, "", None


def _top_contributors(items: list[Ingredient], nutrient: str, count: int,
                      highest: bool) -> list[str]:
    """The ingredients adding most of ``nutrient`` (for a floor: none is singled out)."""
    if not highest:
        return []
    amounts = [(i.grams * (i.nutrients.get(nutrient) or 0.0), i.canonical) for i in items]
    ranked = sorted((a for a in amounts if a[0] > 0), key=lambda a: -a[0])
    return list(dict.fromkeys(name for _, name in ranked))[:count]


def _finish(condition: ConditionKB, side: str, fired: list[dict], overruled: list[dict],
            items: list[Ingredient]) -> Decision:
    names: list[str] = []
    for entry in fired:
        if entry["rule"] == "ingredient_concept":
            names.append(entry["ingredient"])
        else:
            names.extend(entry["ingredients"])
    provenance = list(fired)
    if not names:
        names = _fallback(condition, side, items)
        provenance.append({"rule": "ingredient_fallback", "ingredients": names})
    provenance += [dict(entry, overruled=True) for entry in overruled]
    return Decision(condition.id, side, list(dict.fromkeys(names)), provenance)


def _fallback(condition: ConditionKB, side: str, items: list[Ingredient]) -> list[str]:
    """Canonical instances of the condition's rule sets on the decided side."""
    wanted = set(condition.beneficial.concepts) if side == "Rec" else (
        set(condition.limit.concepts) | set(condition.avoid.concepts))
    return list(dict.fromkeys(i.canonical for i in items if i.concepts & wanted))


def annotate(recipe: dict[str, Any], kb: dict[str, ConditionKB], vocabulary: Vocabulary,
             foods: dict[str, dict[str, Any]], thresholds: Thresholds | None = None
             ) -> dict[str, Any]:
    """The annotation of one recipe: Rec and NotRec entries with provenance, or an exclusion."""
    thresholds = thresholds or load_thresholds()
    record = recipe["record"]
    base = {"recipe_id": record["id"], "title": record["title"]}
    if not recipe.get("kept"):
        return base | {"excluded": f"missing ingredients: {recipe.get('exclusion')}",
                       "rec": [], "not_rec": [], "excluded_entries": []}
    items = recipe_ingredients(recipe, vocabulary, foods)
    decisions = [d for d in (decide(kb[c], items, recipe.get("nutrition"), thresholds)
                             for c in sorted(kb)) if d is not None]
    entries: dict[str, list[dict[str, Any]]] = {"Rec": [], "NotRec": [], "Excluded": []}
    for decision in decisions:
        entry = {"condition": decision.condition, "provenance": decision.provenance}
        if decision.side == "Excluded":
            entry["reason"] = PORTION_REASON
        else:
            entry["ingredients"] = decision.ingredients
        entries[decision.side].append(entry)
    return base | {"excluded": None, "rec": entries["Rec"], "not_rec": entries["NotRec"],
                   "excluded_entries": entries["Excluded"]}
