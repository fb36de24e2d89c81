"""Rule-grounded FAM-Bench annotation (paper section 3.3, Appendices E and F).

For a resolved recipe and each of the 13 conditions, three rule families decide Rec(d) /
NotRec(d) and the canonical ingredients E_h that drive the decision:

1. ingredient consistency: an ingredient that is an instance of a concept *or a food* the
   condition's knowledge base lists under ``avoid`` is NotRec evidence in any non-trace amount
   (any amount at all where the condition file says so: gluten); under ``limit``, when it makes
   up at least ``limit_min_share`` of the recipe's mass; under ``beneficial`` (and on no other
   side), Rec evidence when it makes up at least ``beneficial_min_share``; a starchy staple
   (potatoes, sweet potatoes, cassava, yams, taro, plantains) is no evidence under a generic
   fruit or vegetable entry (WHO does not count starchy roots as fruits or vegetables). Line
   qualifiers ("gluten-free flour") change the ingredient's name, concepts and food-list instances
   (:mod:`nutrireason.fam.foodlists`);
2. nutrient-threshold vetoes: the recipe's own nutrition (per serving when servings are known,
   else per 100 g for limits stated per 100 g) above a condition's ceiling or below its floor is
   NotRec, with the ingredients carrying that nutrient as evidence (each adding at least
   ``contributor_min_share`` of it; never water, never a food the condition lists as beneficial:
   a veto carried only by beneficial foods cannot be a reason against the dish, as the paper's
   first rule family flags a NotRec resting on beneficial foods, nor can the dish be
   recommended over the limit, so the entry is excluded as conflicting evidence); a
   per-serving limit reads the recipe's serving only when it is plausible for the dish's kind
   (``portions``: a dish, a drink or a condiment; FDA reference amounts); without servings, or
   with an implausible one, it is checked over the kind's typical serving range: broken over
   the whole range it is a veto, broken over part of it the condition's entry is excluded
   (Appendix F: portion size decisive but unavailable) unless other evidence already makes it
   NotRec; a limit on ``free_sugars`` (type 2 diabetes, NAFLD) reads the sugars of the dish's
   free-sugar foods only (WHO 2015: added sugars, honey, syrups, sweets and fruit juices; not
   the sugars of milk, fruit or vegetables; :func:`nutrireason.fam.dish.free_sugars`), and
   names those foods as its carriers; the knowledge base's dish-level concept
   ``lower_sodium_meals`` is read from the
   dish's sodium per 100 g (FDA's "low sodium" meal) and rests on its main foods;
3. ingredient fallback: a decision with no ingredient evidence is backfilled with the recipe's
   ingredients that are canonical instances of the condition's rule sets.

Appendix F's other exclusions: an unquantified line ("salt to taste", "oil for frying") that is
on the condition's limit list or rich in a nutrient it limits, or a line whose food the cook
chooses ("cheese of your choice") that the decision rests on, excludes the entry instead of
letting it be recommended (hidden or unquantified ingredient decisive); a recipe without
instructions is excluded whole (unclear preparation).

A condition is never on both sides: NotRec evidence wins and the overruled Rec evidence stays in
the provenance. Conditions with no evidence are omitted (neutral). Every entry records which
rule fired, on which ingredient or nutrient value, against which knowledge-base entry.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from nutrireason.fam.dish import (
    CONDIMENT,
    DECISIVE_WORDS,
    DRINK,
    TOPPING,
    DishProfile,
    dish_profile,
    line_gluten,
)
from nutrireason.fam.foodlists import FoodLists, line_qualifiers
from nutrireason.fam.kb import DERIVED_FROM, ConditionKB, NutrientLimit
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.standards import standards_dir
from nutrireason.standards.loader import RuleValue, Source, StrictModel, load_model

PORTION_REASON = "portion size decisive but unavailable"
HIDDEN_REASON = "hidden or unquantified ingredient decisive"
CONFLICT_REASON = "nutrient limit broken by foods the knowledge base lists as beneficial"
MISSING_REASON = "missing ingredients decisive: an unresolved line names a food that could decide"
WITHHELD_REASON = "recommendation withheld: the dish as a whole does not support the condition"
UNCLEAR_PREPARATION = "unclear preparation: the recipe has no instructions"
GLUTEN = "gluten_containing_grains"
# The concept whose instances carry a vetoed nutrient, for the fallback when no ingredient's
# own nutrients name the carrier.
NUTRIENT_CONCEPTS = {"sodium": "high_sodium_foods", "sugar": "added_sugars",
                     "free_sugars": "added_sugars",
                     "saturated_fat": "saturated_fat_rich_foods",
                     "potassium": "high_potassium_foods", "phosphorus": "high_phosphorus_foods",
                     "total_fat": "saturated_fat_rich_foods"}
# Ingredients that are never evidence for or against a dish.
NOT_EVIDENCE = frozenset({"water"})
# A line that leaves the food to the cook: its identity is unobservable.
OPEN_IDENTITY = re.compile(r"(?i)\b(?:of (?:your|their) choice|your favou?rite|any (?:kind|type|"
                           r"variety) of|or whatever|whatever (?:meat|you like|you have)|"
                           r"assorted meats?)\b")


@dataclass(frozen=True)
class Portion:
    """A kind of dish's serving ranges in grams: a stated serving is used when ``plausible``;
    otherwise per-serving limits are checked over ``typical``."""

    plausible: tuple[float, float]
    typical: tuple[float, float]

    def holds(self, grams: float) -> bool:
        return self.plausible[0] <= grams <= self.plausible[1]


DEFAULT_PORTIONS = {"dish": Portion((20.0, 700.0), (50.0, 350.0)),
                    "drink": Portion((100.0, 750.0), (240.0, 360.0)),
                    "condiment": Portion((5.0, 150.0), (15.0, 60.0))}


def portion_kind(profile: DishProfile) -> str:
    """The serving ranges a dish takes: a drink's, a condiment's (sauces, spreads, icings and
    syrups too), else a dish's."""
    if DRINK in profile.kinds:
        return "drink"
    if CONDIMENT in profile.kinds or TOPPING in profile.kinds:
        return "condiment"
    return "dish"


@dataclass(frozen=True)
class Thresholds:
    """Amount thresholds for the rules (``standards/data/fam_rules.yaml``)."""

    limit_min_share: float
    beneficial_min_share: float
    contributors: int
    portions: dict[str, Portion] = field(default_factory=lambda: dict(DEFAULT_PORTIONS))
    trace_max_g: float = 0.5
    contributor_min_share: float = 0.10
    free_sugars_max_energy_share: float = 0.10
    beneficial_total_min_share: float = 0.25
    ssb_min_free_sugars_per_100g: float = 5.0
    drink_low_free_sugars_per_100g: float = 2.5
    lower_sodium_meal_max_mg_per_100g: float = 140.0


class _Portion(StrictModel):
    plausible: tuple[float, float]
    typical: tuple[float, float]


class _Portions(StrictModel):
    source: str
    dish: _Portion
    drink: _Portion
    condiment: _Portion


class _Rules(StrictModel):
    version: int
    source: Source
    limit_min_share: RuleValue
    beneficial_min_share: RuleValue
    contributors: RuleValue
    portions: _Portions
    trace_max_g: RuleValue
    contributor_min_share: RuleValue
    free_sugars_max_energy_share: RuleValue
    beneficial_total_min_share: RuleValue
    ssb_min_free_sugars_per_100g: RuleValue
    drink_low_free_sugars_per_100g: RuleValue
    alcohol_any_amount: RuleValue
    lower_sodium_meal_max_mg_per_100g: RuleValue


def load_rule_file(path: Path | None = None) -> _Rules:
    """The packaged (or given) ``fam_rules.yaml`` as written: each amount with its source."""
    return load_model(path or standards_dir() / "fam_rules.yaml", _Rules)


def load_thresholds(path: Path | None = None) -> Thresholds:
    """The packaged (or given) ``fam_rules.yaml``."""
    rules = load_rule_file(path)
    portions = {kind: Portion(ranges.plausible, ranges.typical)
                for kind in DEFAULT_PORTIONS for ranges in [getattr(rules.portions, kind)]}
    return Thresholds(rules.limit_min_share.value, rules.beneficial_min_share.value,
                      int(rules.contributors.value), portions, rules.trace_max_g.value,
                      rules.contributor_min_share.value,
                      rules.free_sugars_max_energy_share.value,
                      rules.beneficial_total_min_share.value,
                      rules.ssb_min_free_sugars_per_100g.value,
                      rules.drink_low_free_sugars_per_100g.value,
                      rules.lower_sodium_meal_max_mg_per_100g.value)


@lru_cache(maxsize=1)
def default_food_lists() -> FoodLists:
    """The packaged food-list readings (read once), checked to read every food of the packaged
    knowledge base."""
    from nutrireason.fam.kb import load_kb

    lists = FoodLists.load()
    lists.check_covers(load_kb())
    return lists


@dataclass
class Ingredient:
    """One matched ingredient with its canonical name, concepts and knowledge-base foods;
    ``grams`` is None for an unquantified line ("salt to taste")."""

    line: str
    canonical: str
    concepts: frozenset[str]
    grams: float | None
    nutrients: dict[str, float]
    foods: frozenset[str] = frozenset()
    open_identity: bool = False

    def evidence_row(self, nutrients: list[str]) -> dict[str, Any]:
        """This ingredient as instance evidence (the rule-based reference reads it back)."""
        return {"line": self.line, "canonical": self.canonical,
                "concepts": sorted(self.concepts), "foods": sorted(self.foods),
                "grams": None if self.grams is None else round(self.grams, 3),
                "open_identity": self.open_identity,
                "nutrients": {n: self.nutrients[n] for n in nutrients
                              if self.nutrients.get(n) is not None}}

    @classmethod
    def from_evidence(cls, row: dict[str, Any]) -> Ingredient:
        """The inverse of :meth:`evidence_row`."""
        return cls(row["line"], row["canonical"], frozenset(row["concepts"]), row["grams"],
                   row["nutrients"], frozenset(row.get("foods", ())),
                   bool(row.get("open_identity")))


@dataclass
class Decision:
    """One condition's side, its evidence ingredients and the rules behind it."""

    condition: str
    side: str  # "Rec", "NotRec" or "Excluded" (Appendix F)
    ingredients: list[str]
    provenance: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None  # why an entry is excluded


def recipe_ingredients(recipe: dict[str, Any], vocabulary: Vocabulary,
                       foods: dict[str, dict[str, Any]],
                       food_lists: FoodLists | None = None) -> list[Ingredient]:
    """The recipe's matched ingredients (``recipes.jsonl`` shape) in order, weighed or not."""
    food_lists = food_lists or default_food_lists()
    items = []
    for item in recipe["ingredients"]:
        ndb, grams = item.get("ndb_no"), item.get("grams")
        if not ndb:
            continue
        food = foods.get(ndb, {})
        description = item.get("sr28_description") or food.get("description", "")
        entry = vocabulary.lookup(ndb, description, food.get("group_code", ""))
        qualifiers = line_qualifiers(item.get("states"), description)
        concepts = entry.concepts | ({GLUTEN} if line_gluten(item["line"]) == "hidden"
                                     else frozenset())
        canonical, concepts = food_lists.qualify(entry.canonical, concepts, qualifiers)
        unknown = set(item.get("unknown_nutrients") or ())
        nutrients = {name: value for name, value in food.get("nutrients", {}).items()
                     if name not in unknown}
        items.append(Ingredient(
            item["line"], canonical, concepts, float(grams) if grams else None,
            nutrients, food_lists.foods_of(entry.canonical, description,
                                           qualifiers | low_sodium_by_value(nutrients)),
            bool(OPEN_IDENTITY.search(item["line"]))))
    return items


# FDA 21 CFR 101.61: "low sodium" is 140 mg or less per reference amount; a food with at most
# that much per 100 g is low in sodium for any reference amount up to 100 g (crackers: 30 g).
LOW_SODIUM_MG_PER_100G = 140.0


def low_sodium_by_value(nutrients: dict[str, Any]) -> frozenset[str]:
    """The low-sodium qualifier for a food that is low in sodium by its own SR28 value (plain
    matzo, unsalted crackers): it is then no instance of a food a condition lists as a sodium
    source ("crackers", "popcorn", "canned soups"); its name and concepts stay as they are."""
    value = nutrients.get("sodium")
    try:
        sodium = float(value)
    except (TypeError, ValueError):
        return frozenset()
    return frozenset({"low_sodium"}) if sodium == sodium and \
        sodium <= LOW_SODIUM_MG_PER_100G else frozenset()


def decide(condition: ConditionKB, items: list[Ingredient], nutrition: dict[str, Any] | None,
           thresholds: Thresholds, profile: DishProfile | None = None) -> Decision | None:
    """Rec, NotRec, Excluded or None (neutral) for one condition; ``profile``: the dish as a
    whole (:mod:`nutrireason.fam.dish`)."""
    profile = profile or DishProfile()
    decision = _decide(condition, items, nutrition, thresholds, profile)
    if not any(i.open_identity for i in items) or decision is None:
        return decision
    # the open lines stay in the dish by mass, as a food of unknown identity and nutrients
    known = [Ingredient(i.line, "", frozenset(), i.grams, {}) if i.open_identity else i
             for i in items]
    without = _decide(condition, known, nutrition_without(nutrition, items), thresholds,
                      profile)
    if without is None or without.side != decision.side:
        open_lines = [i.line for i in items if i.open_identity]
        return Decision(condition.id, "Excluded", [], [
            {"rule": "open_identity", "lines": open_lines}], HIDDEN_REASON)
    return decision


def _decide(condition: ConditionKB, items: list[Ingredient], nutrition: dict[str, Any] | None,
            thresholds: Thresholds, profile: DishProfile) -> Decision | None:
    dish = _Dish(items, nutrition, thresholds, profile)
    against, support, unquantified = _list_evidence(condition, dish, thresholds, profile)
    against += _sweetened_drink(condition, dish, profile, thresholds)
    support += lower_sodium_meal(condition, dish, profile, thresholds)
    vetoes, undecided = _nutrient_vetoes(condition, dish, thresholds)
    against += [v for v in vetoes if v["rule"] == "nutrient_veto"]
    conflicting = [v for v in vetoes if v["rule"] != "nutrient_veto"]
    if against:
        return _finish(condition, "NotRec", against, support + conflicting, items)
    if undecided:
        return Decision(condition.id, "Excluded", [], undecided, PORTION_REASON)
    if conflicting:
        return Decision(condition.id, "Excluded", [], conflicting + support, CONFLICT_REASON)
    if not support:
        return None
    hidden = unquantified + _unquantified_nutrients(condition, items)
    if hidden:
        return Decision(condition.id, "Excluded", [], hidden + support, HIDDEN_REASON)
    missing = decisive_unresolved(condition, profile)
    if missing:
        return Decision(condition.id, "Excluded", [], [
            {"rule": "unresolved_decisive", "lines": missing}] + support, MISSING_REASON)
    why = withheld(condition, profile, dish, support, thresholds)
    if why:
        return Decision(condition.id, "Excluded", [], [
            {"rule": "recommend_withheld", "why": why}] + support, WITHHELD_REASON)
    return _finish(condition, "Rec", support, [], items)


def nutrition_without(nutrition: dict[str, Any] | None, items: list[Ingredient]
                      ) -> dict[str, Any] | None:
    """The recipe's nutrition tables with the open lines' SR28 nutrients taken out (their mass
    and the servings stay), so a decision without an open line's identity does not still rest
    on the nutrients of the food it was matched to."""
    per_100g = (nutrition or {}).get("per_100g") or {}
    mass = sum(i.grams or 0.0 for i in items if i.grams)
    removed = [i for i in items if i.open_identity and i.grams]
    if not nutrition or not removed or mass <= 0 or not per_100g:
        return nutrition
    serving = nutrition.get("per_serving") or {}
    tables: dict[str, dict[str, float]] = {"per_100g": {}, "per_serving": {}}
    for name, value in per_100g.items():
        if value is None:
            continue
        total = float(value) * mass / 100.0
        rest = max(total - sum((i.grams or 0.0) * (amount_per_100g(i, name) or 0.0) / 100.0
                               for i in removed), 0.0)
        tables["per_100g"][name] = 100.0 * rest / mass
        if serving.get(name) is not None:
            tables["per_serving"][name] = float(serving[name]) * (rest / total if total else 1.0)
    # both tables scale by the same factor per nutrient, so the serving's grams (read from the
    # calories of the two tables) stay as they were
    return dict(nutrition, per_100g=tables["per_100g"],
                per_serving=tables["per_serving"] if serving else nutrition.get("per_serving"))


def limits_alcohol(condition: ConditionKB) -> bool:
    """The condition's guidance limits alcohol: the concept on any side."""
    return any("alcohol" in condition.side(side).concepts  # type: ignore[arg-type]
               for side in ("avoid", "limit"))


def withheld(condition: ConditionKB, profile: DishProfile, dish: _Dish,
             support: list[dict[str, Any]], thresholds: Thresholds) -> list[str]:
    """Why the dish as a whole is not recommended although beneficial foods support it (see
    :mod:`nutrireason.fam.dish`); [] when it may be."""
    why = []
    share = profile.free_sugar_share
    if not profile.drink and share is not None and \
            share >= thresholds.free_sugars_max_energy_share:  # WHO: "less than 10 %"
        why.append(f"free sugars are {share:.0%} of its energy (WHO: under "
                   f"{thresholds.free_sugars_max_energy_share:.0%})")
    per_100g = profile.free_sugars_per_100g
    if profile.drink and per_100g is not None and \
            per_100g > thresholds.drink_low_free_sugars_per_100g:
        why.append(f"a sweetened drink ({per_100g:g} g free sugars per 100 g, over "
                   f"{thresholds.drink_low_free_sugars_per_100g:g})")
    if profile.drink and profile.alcohol:
        why.append("an alcoholic drink")
    if "sweet topping" in profile.kinds:
        why.append("an icing, syrup or sweet spread")
    if "condiment" in profile.kinds:
        why.append("a condiment, sauce or spice blend, eaten in small amounts")
    if profile.alcohol and limits_alcohol(condition):
        why.append(f"it holds alcohol ({', '.join(profile.alcohol)}), which cooking does not "
                   "remove")
    if profile.absent:
        why.append(f"its title or steps name {', '.join(profile.absent)}, which no ingredient "
                   "line holds: the lines leave part of the dish out")
    if profile.label_gluten and GLUTEN in condition.side("avoid").concepts:
        why.append(f"it holds {profile.label_gluten[0]!r}, a product made with or without "
                   "wheat: only its label tells")
    why += short_of(condition, dish, support)
    beneficial = beneficial_share(dish, support)
    if beneficial < thresholds.beneficial_total_min_share:
        why.append(f"its beneficial foods are {beneficial:.0%} of its mass without water "
                   f"(under {thresholds.beneficial_total_min_share:.0%})")
    return why


def short_of(condition: ConditionKB, dish: _Dish, support: list[dict[str, Any]]) -> list[str]:
    """What the condition requires of a recommended dish's nutrition that the dish does not
    meet (``recommend_requires``). Without a plausible serving, the most generous typical
    serving of the dish's kind is read: a dish is held short only when even that falls short.
    A required nutrient must come mostly from the supporting foods (a pancake's iron from its
    enriched flour does not make its banana a support for anaemia)."""
    why = []
    for need in condition.recommend_requires:
        if need.min is not None:
            why += _not_from_support(need.nutrient, dish, support)
        value, basis = _limit_value(need, dish) if dish.nutrition else (None, "")
        if value is None and need.per == "100g":
            why.append(f"its {need.nutrient} per 100 g is unknown")
            continue
        if value is None:
            per_100g = _dish_per_100g(need.nutrient, dish) if dish.nutrition else None
            if per_100g is None:
                why.append(f"its {need.nutrient} is unknown")
                continue
            # the most generous typical serving: the largest for a minimum, else the smallest
            grams = dish.portion.typical[1 if need.min is not None else 0]
            value, basis = per_100g * grams / 100, f"in a {grams:g} g serving"
        if need.violated_by(value) and need.min is not None:
            why.append(f"{basis} it holds {value:.3g} {need.unit} {need.nutrient}, under the "
                       f"{need.min:g} {need.unit} a recommended dish must supply")
        elif need.violated_by(value):
            why.append(f"{basis} it holds {value:.3g} {need.unit} {need.nutrient}, over the "
                       f"{need.max:g} {need.unit} a recommended dish may hold")
    return why


SUPPORT_CARRIES = 0.5  # the supporting foods carry at least half of a required nutrient


def _not_from_support(nutrient: str, dish: _Dish, support: list[dict[str, Any]]) -> list[str]:
    """Why the supporting foods are not the source of a required nutrient ([] when they
    carry at least half of it, or when the support is the dish as a whole)."""
    if any(e.get("dish_level") for e in support):
        return []
    named = {e["ingredient"] for e in support if "ingredient" in e}
    amounts = [(i.canonical in named, i.grams * value / 100) for i in dish.weighed
               if i.grams and (value := amount_per_100g(i, nutrient)) is not None]
    total = sum(amount for _, amount in amounts)
    carried = sum(amount for named_food, amount in amounts if named_food)
    if total <= 0 or carried >= SUPPORT_CARRIES * total:
        return []
    return [f"its supporting foods ({', '.join(sorted(named))}) carry {carried / total:.0%} of "
            f"its {nutrient}, under half: the nutrient comes from other foods"]


def beneficial_share(dish: _Dish, support: list[dict[str, Any]]) -> float:
    """The share of the dish's mass, water left out, that its supporting foods make up (all of
    it when the support is the dish as a whole, such as a lower-sodium meal)."""
    if any(e.get("dish_level") for e in support):
        return 1.0
    named = {e["ingredient"] for e in support}
    solids = sum(i.grams or 0.0 for i in dish.weighed if i.canonical not in NOT_EVIDENCE)
    found = sum(i.grams or 0.0 for i in dish.weighed if i.canonical in named)
    return found / solids if solids > 0 else 0.0


def sugar_sweetened_drink(profile: DishProfile, thresholds: Thresholds) -> bool:
    """A drink with at least the levy's free sugars per 100 g."""
    per_100g = profile.free_sugars_per_100g
    return profile.drink and per_100g is not None and \
        per_100g >= thresholds.ssb_min_free_sugars_per_100g


def decisive_unresolved(condition: ConditionKB, profile: DishProfile) -> list[str]:
    """The unresolved lines that name a food the condition is against (Appendix F: missing
    ingredients decisive)."""
    against = [condition.side(side) for side in ("avoid", "limit")]  # type: ignore[arg-type]
    lines: list[str] = []
    for concept, found in sorted(profile.unresolved.items()):
        named = any(concept in lists.concepts or
                    any(DECISIVE_WORDS[concept].search(food) for food in lists.foods)
                    for lists in against)
        if named or (concept == "alcohol" and limits_alcohol(condition)):
            lines += found
    return list(dict.fromkeys(lines))


def lower_sodium_meal(condition: ConditionKB, dish: _Dish, profile: DishProfile,
                      thresholds: Thresholds) -> list[dict[str, Any]]:
    """The dish-level concept ``lower_sodium_meals``, where the condition lists it as
    beneficial: a dish (not a drink, condiment or topping) with every weighed line's sodium
    known and at most ``lower_sodium_meal_max_mg_per_100g`` per 100 g (FDA's "low sodium" meal),
    resting on its main foods (each a tenth of its mass or more, water left out); none when
    one of them is on the condition's avoid or limit side."""
    concept = "lower_sodium_meals"
    if concept not in condition.beneficial.concepts or portion_kind(profile) != "dish":
        return []
    solids = [i for i in dish.weighed if i.canonical not in NOT_EVIDENCE]
    if not solids or any(amount_per_100g(i, "sodium") is None for i in solids):
        return []
    sodium = _dish_per_100g("sodium", dish)
    if sodium is None or sodium > thresholds.lower_sodium_meal_max_mg_per_100g:
        return []
    mass = sum(i.grams or 0.0 for i in solids)
    # the main foods, never one the condition lists against (soy beans in a soy milk)
    main = [i for i in solids if (i.grams or 0.0) >= thresholds.beneficial_min_share * mass]
    if any({"avoid", "limit"} & set(side_hits(condition, i)) for i in main):
        return []
    return [{"rule": "ingredient_concept", "ingredient": item.canonical, "line": item.line,
             "concept": concept, "kb_side": "beneficial", "dish_level": True,
             "mass_share": round((item.grams or 0.0) / mass, 4),
             "sodium_per_100g": round(sodium, 3),
             "max_per_100g": thresholds.lower_sodium_meal_max_mg_per_100g} for item in main]


def _sweetened_drink(condition: ConditionKB, dish: _Dish, profile: DishProfile,
                     thresholds: Thresholds) -> list[dict[str, Any]]:
    """A sugar-sweetened drink is that concept as a whole: evidence against it where the
    condition lists the concept, resting on the foods that carry its free sugars."""
    if not sugar_sweetened_drink(profile, thresholds):
        return []
    entries = []
    for side in ("avoid", "limit"):
        if "sugar_sweetened_beverages" not in condition.side(side).concepts:  # type: ignore
            continue
        for item in dish.items:
            if item.canonical in profile.free_sugar_foods and item.grams:
                entries.append({"rule": "ingredient_concept", "ingredient": item.canonical,
                                "line": item.line, "concept": "sugar_sweetened_beverages",
                                "kb_side": side, "mass_share": round(dish.share(item), 4),
                                "dish_level": True})
    return entries


class _Dish:
    """Mass and serving figures the rules share."""

    def __init__(self, items: list[Ingredient], nutrition: dict[str, Any] | None,
                 thresholds: Thresholds, profile: DishProfile | None = None) -> None:
        self.items = items
        self.nutrition = nutrition or {}
        self.weighed = [i for i in items if i.grams]
        self.total = sum(i.grams or 0.0 for i in self.weighed) or 1.0
        self.profile = profile or DishProfile()
        self.kind = portion_kind(self.profile)
        self.portion = thresholds.portions[self.kind]
        self.stated_serving_g = serving_grams(self.nutrition)
        # a stated serving outside the kind's plausible range is treated as unknown
        plausible = self.stated_serving_g is not None and self.portion.holds(
            self.stated_serving_g)
        self.serving_g = self.stated_serving_g if plausible else None
        self.trace_serving_g = self.serving_g or self.portion.typical[1]

    def serving_note(self) -> str:
        """Why the typical range stands in for the serving."""
        if self.stated_serving_g is None:
            return "servings unknown"
        low, high = self.portion.plausible
        return (f"stated serving {self.stated_serving_g:.0f} g outside the plausible "
                f"{low:g}-{high:g} g of a {self.kind}")

    def share(self, item: Ingredient) -> float:
        return (item.grams or 0.0) / self.total

    def per_serving_g(self, item: Ingredient) -> float:
        return self.share(item) * self.trace_serving_g


def serving_grams(nutrition: dict[str, Any]) -> float | None:
    """Grams in one serving, read from the recipe's two nutrition tables (None without
    servings)."""
    per_serving = (nutrition.get("per_serving") or {}).get("calories")
    per_100g = (nutrition.get("per_100g") or {}).get("calories")
    if not per_serving or not per_100g:
        return None
    return 100.0 * float(per_serving) / float(per_100g)


def side_hits(condition: ConditionKB, item: Ingredient) -> dict[str, list[tuple[str, str]]]:
    """The item's (kind, name) hits per side of the condition: concepts, then foods."""
    hits: dict[str, list[tuple[str, str]]] = {}
    for side in ("avoid", "limit", "beneficial"):
        if not condition.counts(item.canonical, side):  # type: ignore[arg-type]
            continue
        lists = condition.side(side)  # type: ignore[arg-type]
        found = [("concept", c) for c in sorted(item.concepts) if c in lists.concepts]
        found += [("food", f) for f in lists.foods if f in item.foods]
        if found:
            hits[side] = found
    return hits


def beneficial_only(condition: ConditionKB, item: Ingredient) -> bool:
    """On the condition's beneficial side and on no other."""
    return set(side_hits(condition, item)) == {"beneficial"}


def _fired(item: Ingredient, side: str, hits: list[tuple[str, str]], share: float | None
           ) -> list[dict[str, Any]]:
    """Provenance entries: every concept hit, and the food hits when no concept fired."""
    concepts = [name for kind, name in hits if kind == "concept"]
    entries = [{"rule": "ingredient_concept", "ingredient": item.canonical, "line": item.line,
                "concept": name, "kb_side": side} for name in concepts]
    if not concepts:
        entries = [{"rule": "food_list", "ingredient": item.canonical, "line": item.line,
                    "food": name, "kb_side": side} for kind, name in hits]
    share_value = None if share is None else round(share, 4)
    return [entry | {"mass_share": share_value} for entry in entries]


def _list_evidence(condition: ConditionKB, dish: _Dish, thresholds: Thresholds,
                   profile: DishProfile | None = None
                   ) -> tuple[list[dict], list[dict], list[dict]]:
    """(against, support, unquantified limit hits) from the concept and food lists; in a drink
    an alcoholic ingredient on the limit side counts in any amount."""
    drink = profile is not None and profile.drink
    against, support, unquantified = [], [], []
    refined_bread = whole_grain_minority(dish)
    for item in dish.items:
        if item.canonical in NOT_EVIDENCE:
            continue
        hits = side_hits(condition, item)
        share = dish.share(item) if item.grams else None
        if "avoid" in hits:
            trace = item.grams is not None and not condition.avoid_any_amount and \
                dish.per_serving_g(item) < thresholds.trace_max_g
            if not trace:
                against += _fired(item, "avoid", hits["avoid"], share)
        if "limit" in hits:
            if share is None:
                unquantified += [e | {"rule": "unquantified_" + e["rule"]}
                                 for e in _fired(item, "limit", hits["limit"], None)]
            elif drink and "alcohol" in item.concepts:
                against += _fired(item, "limit", hits["limit"], share)
            elif share >= thresholds.limit_min_share and (limit := cooked_alcohol_aside(
                    item, hits["limit"], drink)):
                against += _fired(item, "limit", limit, share)
        produce = _staple_hits(item, hits.get("beneficial", []))
        if refined_bread:
            produce = [(kind, name) for kind, name in produce if not WHOLE_GRAIN.search(name)]
        if set(hits) == {"beneficial"} and produce and share is not None and \
                share >= thresholds.beneficial_min_share:
            support += _fired(item, "beneficial", produce, share)
    return against, support, unquantified


WHOLE_GRAIN = re.compile(r"(?i)whole[ _-]?grain")


def whole_grain_minority(dish: _Dish) -> bool:
    """Whole grains are under half of the dish's grain by weight: no whole-grain support (the
    FDA's whole-grain health claim asks for at least 51 % whole grain by weight; "whole wheat"
    as a third of a white-flour bread is a refined bread)."""
    whole = sum(i.grams or 0.0 for i in dish.items if "whole_grains" in i.concepts)
    refined = sum(i.grams or 0.0 for i in dish.items if "refined_grains" in i.concepts)
    return whole > 0 and refined > whole


# WHO (Healthy diet, fact sheet 394): "potatoes, sweet potatoes, cassava and other starchy
# roots are not classified as fruits or vegetables"; plantains are counted with them (FAO:
# roots, tubers and plantains). Such a food is no evidence under a generic fruit or vegetable
# entry; a knowledge base that names it (or another concept it has) still counts.
STARCHY_STAPLES = re.compile(r"(?i)\b(potato(?:es)?|sweet potato(?:es)?|cassava|yuca|manioc|"
                             r"yams?|taro|eddoes?|dasheen|plantains?|breadfruit|hash browns?|"
                             r"french fries|fries)\b")
GENERIC_PRODUCE = re.compile(r"(?i)^(?:vegetables|fruits|non_starchy_vegetables|"
                             r"orange_yellow_vegetables|vegetables of all types|"
                             r"non citrus fruits)$")


def _staple_hits(item: Ingredient, hits: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The beneficial hits that stand for a starchy staple: all but the generic fruit and
    vegetable entries, which do not cover starchy roots and plantains."""
    if not STARCHY_STAPLES.search(item.canonical):
        return hits
    return [(kind, name) for kind, name in hits if not GENERIC_PRODUCE.match(name)]


ALCOHOL_ENTRY = re.compile(r"(?i)alcohol|\bwine\b|\bbeer\b|liquor|spirits")


def cooked_alcohol_aside(item: Ingredient, hits: list[tuple[str, str]], drink: bool
                         ) -> list[tuple[str, str]]:
    """A limit-side hit list without its alcohol entries when the alcohol is cooked into a
    dish (not a drink): what a serving keeps depends on a method and time the recipe rarely
    states (USDA retention factors: 5-85 %), and guidance limits drinks, so it withholds a
    recommendation but is no evidence against the dish; an avoid-side alcohol entry still
    counts (gout, NAFLD, GERD)."""
    if drink or "alcohol" not in item.concepts:
        return hits
    return [(kind, name) for kind, name in hits if not ALCOHOL_ENTRY.search(name)]


# An oil line for deep frying: what the dish keeps of it is unknown, and a frying bath is no
# beneficial use of an oil, whatever the condition lists ("Oil (enough to fill the deep fryer)").
FRYING_OIL = re.compile(r"(?i)\bfor (?:deep[- ]?)?fry(?:ing)?\b|\bdeep[- ]?fr(?:y|yer|ying)\b|"
                        r"\bto (?:deep[- ]?)?fry\b")


def _unquantified_nutrients(condition: ConditionKB, items: list[Ingredient]) -> list[dict]:
    """Unquantified lines rich in a nutrient the condition caps: 100 g of the food alone
    would break the limit ("salt to taste" for a sodium limit; an unmeasured frying oil even
    where the condition lists the oil as beneficial)."""
    found = []
    for item in items:
        if item.grams is not None or item.canonical in NOT_EVIDENCE or \
                (beneficial_only(condition, item) and not FRYING_OIL.search(item.line)):
            continue
        for limit in condition.nutrient_limits:
            per_100g = amount_per_100g(item, limit.nutrient)
            if limit.max is not None and per_100g is not None and per_100g >= limit.max:
                found.append({"rule": "unquantified_ingredient", "ingredient": item.canonical,
                              "line": item.line, "nutrient": limit.nutrient,
                              "per_100g": per_100g, "max": limit.max, "unit": limit.unit})
    return found


def _nutrient_vetoes(condition: ConditionKB, dish: _Dish, thresholds: Thresholds
                     ) -> tuple[list[dict], list[dict]]:
    """(vetoes that fire or are waived, limits whose outcome hangs on an unknown serving)."""
    if not dish.nutrition:
        return [], []
    fired, undecided = [], []
    for limit in condition.nutrient_limits:
        value, basis = _limit_value(limit, dish)
        if value is None:
            per_100g = _dish_per_100g(limit.nutrient, dish)
            if limit.per != "serving" or per_100g is None:
                continue
            value, basis, open_case = _portion_range(limit, per_100g, dish)
            if open_case is not None:
                undecided.append(open_case)
            if value is None:
                continue
        over = limit.max is not None and value > limit.max
        under = limit.min is not None and value < limit.min
        if not (over or under):
            continue
        entry = {"rule": "nutrient_veto", "nutrient": limit.nutrient,
                 "value": round(float(value), 3), "max": limit.max, "min": limit.min,
                 "per": limit.per, "unit": limit.unit, "source": limit.source, "basis": basis,
                 "ingredients": []}
        if basis == "per serving":
            entry["serving_g"] = round(float(dish.serving_g or 0.0), 1)
        if over:
            found = carriers(condition, _carrying(dish, limit.nutrient),
                             DERIVED_FROM.get(limit.nutrient, limit.nutrient), thresholds,
                             needed=min(0.5, float(limit.max) / float(value)))
            entry["ingredients"] = found or []
            if found == []:
                entry["rule"] = "nutrient_veto_conflict"
                entry["why"] = ("carried over the limit by foods the condition lists as "
                                "beneficial (or by water): the others alone stay under it, so "
                                "no ingredient can be named against the dish, and the limit "
                                "forbids calling it recommended")
        fired.append(entry)
    return fired, undecided


def _carrying(dish: _Dish, nutrient: str) -> list[Ingredient]:
    """The ingredients that may carry ``nutrient``: for free sugars, the free-sugar foods
    (the sugar of milk or fruit is none)."""
    if nutrient != "free_sugars":
        return dish.items
    return [i for i in dish.items if i.canonical in dish.profile.free_sugar_foods]


def amount_per_100g(item: Ingredient, nutrient: str) -> float | None:
    """The item's nutrient per 100 g; None when SR28 has no value (missing or NaN)."""
    value = item.nutrients.get(nutrient)
    if value is None or math.isnan(float(value)):
        return None
    return float(value)


def _dish_per_100g(nutrient: str, dish: _Dish) -> float | None:
    """The dish's nutrient per 100 g: from its table, else summed over weighed ingredients
    (nutrients read beside the recipe table, such as total fat)."""
    if nutrient == "free_sugars":  # from the dish's free-sugar foods (nutrireason.fam.dish)
        return dish.profile.free_sugars_per_100g
    table = dish.nutrition.get("per_100g") or {}
    if nutrient in table:
        value = table[nutrient]
        return None if value is None else float(value)
    amounts = [i.grams * value / 100 for i in dish.weighed
               if i.grams and (value := amount_per_100g(i, nutrient)) is not None]
    if not amounts:
        return None
    return 100.0 * sum(amounts) / dish.total


def _limit_value(limit: NutrientLimit, dish: _Dish) -> tuple[float | None, str]:
    per_100g = _dish_per_100g(limit.nutrient, dish)
    if limit.per == "100g":
        return (None, "") if per_100g is None else (per_100g, "per 100g")
    table = dish.nutrition.get("per_serving") or {}
    if dish.serving_g is None:  # unknown or implausible: the typical range decides
        return None, ""
    if limit.nutrient in table and table[limit.nutrient] is not None:
        return float(table[limit.nutrient]), "per serving"
    if table and dish.serving_g and per_100g is not None:
        return per_100g * dish.serving_g / 100, "per serving"
    return None, ""


def _portion_range(limit: NutrientLimit, per_100g: float, dish: _Dish
                   ) -> tuple[float | None, str, dict | None]:
    """A per-serving limit without a plausible serving: the amount in the smallest and largest
    typical serving of the dish's kind. Broken at both ends -> a veto (on the end that breaks
    it least); at one end only -> portion size is decisive (Appendix F); at neither ->
    nothing."""
    low_g, high_g = dish.portion.typical
    small, large = per_100g * low_g / 100, per_100g * high_g / 100
    broken = (limit.violated_by(small), limit.violated_by(large))
    if all(broken):
        end = (small, low_g) if limit.max is not None else (large, high_g)
        return end[0], f"per 100 g x {end[1]:g} g serving ({dish.serving_note()})", None
    if any(broken):
        return None, "", {"rule": "portion_undecidable", "nutrient": limit.nutrient,
                          "per_100g": round(per_100g, 3), "max": limit.max, "min": limit.min,
                          "unit": limit.unit, "serving_range_g": [low_g, high_g],
                          "why": dish.serving_note(), "source": limit.source}
    return None, "", None


def carriers(condition: ConditionKB, items: list[Ingredient], nutrient: str,
             thresholds: Thresholds, needed: float = 0.0) -> list[str] | None:
    """The ingredients carrying a nutrient over its ceiling: by amount, each adding at least
    ``contributor_min_share`` of the dish's total (the largest eligible ones otherwise), never
    water and never a food the condition lists as beneficial only. ``[]`` when such foods
    carry it over the ceiling: the others carry no more than ``needed`` of the total (the
    caller passes the smaller of a half and the ceiling's share of the dish's amount: they
    are the minor carriers and alone would stay under it, as a teaspoon of rosemary beside
    the fat of a salmon steak for cardiovascular disease); None when no ingredient's amount
    of it is known."""
    amounts = [((i.grams or 0.0) * (amount_per_100g(i, nutrient) or 0.0), i) for i in items]
    total = sum(a for a, _ in amounts)
    if total <= 0:
        return None
    eligible = sorted(((a, i) for a, i in amounts if a > 0 and i.canonical not in NOT_EVIDENCE
                       and not beneficial_only(condition, i)), key=lambda pair: -pair[0])
    if sum(a for a, _ in eligible) <= needed * total:
        return []
    major = [i for a, i in eligible if a >= thresholds.contributor_min_share * total] or \
        [i for _, i in eligible]
    return list(dict.fromkeys(i.canonical for i in major))[:thresholds.contributors]


def _finish(condition: ConditionKB, side: str, fired: list[dict], overruled: list[dict],
            items: list[Ingredient]) -> Decision:
    names: list[str] = []
    for entry in fired:
        if entry["rule"] in ("ingredient_concept", "food_list"):
            names.append(entry["ingredient"])
        else:
            names.extend(entry["ingredients"])
    provenance = list(fired)
    if not names:
        vetoed = {NUTRIENT_CONCEPTS.get(e.get("nutrient", "")) for e in fired} - {None}
        names = _fallback(condition, side, items, vetoed)
        provenance.append({"rule": "ingredient_fallback", "ingredients": names})
    provenance += [dict(entry, overruled=True) for entry in overruled]
    return Decision(condition.id, side, list(dict.fromkeys(names)), provenance)


def _fallback(condition: ConditionKB, side: str, items: list[Ingredient],
              vetoed: set[str]) -> list[str]:
    """Canonical instances of the condition's rule sets on the decided side (and of the
    concepts carrying a vetoed nutrient)."""
    wanted = ("beneficial",) if side == "Rec" else ("limit", "avoid")
    chosen = []
    for item in items:
        hits = side_hits(condition, item)
        if item.canonical in NOT_EVIDENCE or not (any(s in hits for s in wanted)
                                                  or item.concepts & vetoed):
            continue
        if side != "Rec" and beneficial_only(condition, item):
            continue
        chosen.append(item.canonical)
    return list(dict.fromkeys(chosen))


def annotate(recipe: dict[str, Any], kb: dict[str, ConditionKB], vocabulary: Vocabulary,
             foods: dict[str, dict[str, Any]], thresholds: Thresholds | None = None,
             food_lists: FoodLists | None = None) -> dict[str, Any]:
    """The annotation of one recipe: Rec and NotRec entries with provenance, or an exclusion."""
    thresholds = thresholds or load_thresholds()
    record = recipe["record"]
    base = {"recipe_id": record["id"], "title": record["title"]}
    empty = {"rec": [], "not_rec": [], "excluded_entries": []}
    if not recipe.get("kept"):
        return base | empty | {"excluded": f"missing ingredients: {recipe.get('exclusion')}"}
    if not record.get("instructions"):
        return base | empty | {"excluded": UNCLEAR_PREPARATION}
    items = recipe_ingredients(recipe, vocabulary, foods, food_lists)
    profile = dish_profile(recipe, items)
    decisions = [d for d in (decide(kb[c], items, recipe.get("nutrition"), thresholds, profile)
                             for c in sorted(kb)) if d is not None]
    entries: dict[str, list[dict[str, Any]]] = {"Rec": [], "NotRec": [], "Excluded": []}
    for decision in decisions:
        entry = {"condition": decision.condition, "provenance": decision.provenance}
        if decision.side == "Excluded":
            entry["reason"] = decision.reason
        else:
            entry["ingredients"] = decision.ingredients
        entries[decision.side].append(entry)
    return base | {"excluded": None, "rec": entries["Rec"], "not_rec": entries["NotRec"],
                   "excluded_entries": entries["Excluded"]}
