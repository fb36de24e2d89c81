"""How much of a recipe's energy its unresolved lines may hold.

A recipe is kept when its unresolved lines hold under a tenth of its estimated energy (not its
mass: three star anise or ten ice cubes decide nothing, a missing tablespoon of oil may). An
unresolved line's grams come from its mass unit or a generic density (the build's estimate),
else a standard weight: a counted whole spice (a star anise, a cardamom pod, a cinnamon stick, a
bay leaf) weighs ``spice_piece_grams``; any other line of unknown mass weighs the recipe's
median line (its heaviest when it names meat or fish, likely the main part). Its energy per
100 g is the median of the SR28 food group its words name (``unresolved_energy.groups`` in
``standards/data/recipes.yaml``: "elk steaks" is game meat, "tofu puffs" legume products,
"goat cheese crumbles" dairy); ice and water hold none; a line naming no group holds the
median energy per 100 g of all SR28 foods (not the recipe's own: a porridge of an unresolved
grain and water would hold none).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

import pandas as pd

from nutrireason.standards.loader import RuleValue, Source, StrictModel

WORD = re.compile(r"[a-z]+")


class UnresolvedEnergyRules(StrictModel):
    source: Source
    zero: list[str]
    sweetened: list[str]
    groups: dict[str, list[str]]
    spice_piece_grams: RuleValue


@dataclass(frozen=True)
class LineEnergy:
    """An unresolved line's estimated grams and energy per 100 g (None: the recipe's own
    density), with what they rest on."""

    grams: float | None
    kcal_per_100g: float | None
    basis: str


class UnresolvedEnergy:
    """Energy per 100 g for the words of an unresolved line."""

    def __init__(self, rules: UnresolvedEnergyRules, group_kcal: dict[str, float],
                 any_food_kcal: float) -> None:
        self.rules = rules
        self.any_food_kcal = any_food_kcal
        self.zero = {w.lower() for w in rules.zero}
        self.group_of = {word.lower(): group for group, words in rules.groups.items()
                         for word in words}
        self.group_kcal = group_kcal
        self.sweetened = {w.lower() for w in rules.sweetened}

    @classmethod
    def from_sr28(cls, rules: UnresolvedEnergyRules, nutrients: pd.DataFrame,
                  foods: pd.DataFrame) -> UnresolvedEnergy:
        groups = dict(zip(foods["ndb_no"], foods["group_code"], strict=True))
        by_group: dict[str, list[float]] = {}
        for ndb, kcal in zip(nutrients["ndb_no"], nutrients["calories"], strict=True):
            if kcal == kcal and ndb in groups:  # NaN: not measured
                by_group.setdefault(groups[ndb], []).append(float(kcal))
        wanted = set(rules.groups)
        every = [value for values in by_group.values() for value in values]
        return cls(rules, {group: round(statistics.median(values), 3)
                           for group, values in sorted(by_group.items()) if group in wanted},
                   round(statistics.median(every), 3) if every else 100.0)

    def group(self, name: str) -> str | None:
        """"zero", an SR28 group code, or None for the words of a food name (the last word that
        names one: "goat cheese crumbles" is cheese, "pumpkin flesh" pumpkin)."""
        words = WORD.findall(name.lower())
        if any(w in self.zero or w.rstrip("s") in self.zero for w in words):
            return "zero"
        for word in words:  # "crystallized ginger" is a sweet, whatever it was made of
            if word in self.sweetened:
                return self.group_of.get("sugar")
        for word in reversed(words):
            found = self.group_of.get(word) or self.group_of.get(word.rstrip("s"))
            if found:
                return found
        return None

    def line(self, name: str, grams: float | None, count: float | None) -> LineEnergy:
        """The energy guess for an unresolved line named ``name`` weighing ``grams`` (None:
        unknown), ``count`` pieces where the line counts them."""
        group = self.group(name)
        if group == "zero":
            return LineEnergy(grams or 0.0, 0.0, "ice or water")
        kcal = self.group_kcal.get(group or "")
        if grams is None and count and group == "0200":
            grams = count * self.rules.spice_piece_grams.value
            return LineEnergy(grams, kcal, "counted whole spice")
        if kcal is None:
            return LineEnergy(grams, self.any_food_kcal, "median of all SR28 foods")
        return LineEnergy(grams, kcal, f"SR28 group {group} median")


def energy_share(resolved: list[tuple[float, float]], unresolved: list[LineEnergy]
                 ) -> float:
    """The unresolved lines' share of the recipe's estimated energy. ``resolved``: (grams,
    kcal per 100 g) of the weighed resolved lines; an unresolved line without an energy
    density takes the resolved lines' (1 when nothing is resolved and weighed)."""
    mass = sum(grams for grams, _ in resolved)
    energy = sum(grams * kcal / 100 for grams, kcal in resolved)
    density = 100 * energy / mass if mass else None  # kcal per 100 g
    missing = 0.0
    for item in unresolved:
        kcal = item.kcal_per_100g if item.kcal_per_100g is not None else density
        grams = item.grams or 0.0
        missing += grams * (kcal if kcal is not None else 100.0) / 100
    if density is None:  # nothing resolved and weighed
        return 1.0
    total = energy + missing
    return missing / total if total else 0.0
