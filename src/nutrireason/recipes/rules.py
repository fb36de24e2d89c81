"""The recipe build's rule files, loaded and checked: ``standards/data/recipes.yaml`` (limits,
categories, coverage) and the reviewed ingredient map ``ingredient_map.yaml``. At the bottom of
``recipes/``: every step may read them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from nutrireason.errors import DataError
from nutrireason.recipes.coverage import UnresolvedEnergyRules
from nutrireason.standards import standards_dir
from nutrireason.standards.loader import RuleValue, Source, StrictModel, load_model
from nutrireason.storage import parse_yaml


class CategoryRule(StrictModel):
    group: str
    keywords: list[str]


class RecipeRules(StrictModel):
    version: int
    source: Source
    min_resolved_share: RuleValue
    max_line_grams: RuleValue
    max_quantity_mass_g: RuleValue
    max_quantity_cups: RuleValue
    max_quantity_items: RuleValue
    max_spice_line_grams: RuleValue
    max_total_grams: RuleValue
    max_energy_density: RuleValue
    serving_energy: RuleValue
    min_serving_energy: RuleValue
    published_ratio: RuleValue
    min_total_grams: RuleValue
    min_match_score: RuleValue
    nutrient_coverage: RuleValue
    packet_grams: RuleValue
    can_grams: RuleValue
    frying_oil_grams: RuleValue
    unresolved_energy: UnresolvedEnergyRules
    categories: list[CategoryRule]


def load_recipe_rules(path: Path | None = None) -> RecipeRules:
    """``standards/data/recipes.yaml``."""
    return load_model(path or standards_dir() / "recipes.yaml", RecipeRules)


@dataclass
class ReviewedMap:
    """The hand-reviewed ``ingredient_map.yaml``: names -> (ndb_no or None, description or
    reason), grams per unit for measures SR28's WEIGHT table lacks, and reviewed grams per unit
    that replace a wrong SR28 portion (``weight_overrides``, each with its reason in ``note``)."""

    names: dict[str, tuple[str | None, str]]
    unit_weights: dict[str, dict[str, float]]
    weight_overrides: dict[str, dict[str, float]] = field(default_factory=dict)
    # name -> grams per teaspoon, for names whose bulk density is not their SR28 food's
    # (kosher salt's flakes weigh about two thirds of table salt's grains by volume)
    teaspoon_grams: dict[str, float] = field(default_factory=dict)
    # name -> grams per piece, for names SR28 weighs by another kind's piece (a habanero is
    # not SR28's 45 g long red chili)
    piece_grams: dict[str, float] = field(default_factory=dict)


def _named_grams(path: Path, entry: dict, index: int, key: str) -> dict[str, float]:
    """An entry's own grams for its names (``teaspoon_grams``, ``piece_grams``): a food, a
    positive number and a note citing it."""
    grams = entry.get(key)
    if grams is None:
        return {}
    if entry.get("ndb_no") is None or not entry.get("note") or \
            not isinstance(grams, int | float) or grams <= 0:
        raise DataError(path, f"{key} needs a food, a positive number and a note citing it",
                        field=f"entries[{index}].{key}", value=grams)
    return {str(name).lower(): float(grams) for name in entry["names"]}


def load_ingredient_map(path: Path | None = None) -> ReviewedMap:
    """Load and check the reviewed ingredient map."""
    path = path or standards_dir() / "ingredient_map.yaml"
    if not path.is_file():
        return ReviewedMap({}, {}, {})
    data = parse_yaml(path.read_text(encoding="utf-8")) or {}
    table: dict[str, tuple[str | None, str]] = {}
    weights: dict[str, dict[str, float]] = {}
    overrides: dict[str, dict[str, float]] = {}
    teaspoon: dict[str, float] = {}
    piece: dict[str, float] = {}
    for index, entry in enumerate(data.get("entries", [])):
        ndb = entry.get("ndb_no")
        if ndb is not None and not re.fullmatch(r"\d{5}", str(ndb)):
            raise DataError(path, "ndb_no must be 5 digits", field=f"entries[{index}].ndb_no",
                            value=ndb)
        for name in entry.get("names", []):
            if str(name).lower() in table:
                raise DataError(path, "name listed twice", field=f"entries[{index}].names",
                                value=name)
            table[str(name).lower()] = (None if ndb is None else str(ndb),
                                        entry.get("description") or entry.get("reason", ""))
        if ndb is not None and entry.get("unit_weights"):
            weights[str(ndb)] = {str(k): float(v) for k, v in entry["unit_weights"].items()}
        if entry.get("weight_overrides"):
            if ndb is None or not entry.get("note"):
                raise DataError(path, "a weight override needs a food and a note saying why "
                                "SR28's portion is wrong", field=f"entries[{index}].note")
            overrides[str(ndb)] = {str(k): float(v)
                                   for k, v in entry["weight_overrides"].items()}
        teaspoon.update(_named_grams(path, entry, index, "teaspoon_grams"))
        piece.update(_named_grams(path, entry, index, "piece_grams"))
    for ndb, portion, grams in _portion_overrides(path, data.get("portion_overrides") or []):
        if portion in overrides.get(ndb, {}):
            raise DataError(path, "portion overridden twice", field="portion_overrides",
                            value=f"{ndb} {portion}")
        overrides.setdefault(ndb, {})[portion] = grams
    return ReviewedMap(table, weights, overrides, teaspoon, piece)


def _portion_overrides(path: Path, rows: list) -> list[tuple[str, str, float]]:
    """``portion_overrides``: SR28 portions of any food replaced by reviewed grams (a food
    the map names by way of a state or a sibling too), each with a note citing its source."""
    out = []
    for index, row in enumerate(rows):
        where = f"portion_overrides[{index}]"
        ndb, portion, grams = row.get("ndb_no"), row.get("portion"), row.get("grams")
        if not re.fullmatch(r"\d{5}", str(ndb)):
            raise DataError(path, "ndb_no must be 5 digits", field=f"{where}.ndb_no", value=ndb)
        if not isinstance(portion, str) or not portion.strip():
            raise DataError(path, "portion must name SR28's measure word", field=f"{where}.portion",
                            value=portion)
        if not isinstance(grams, int | float) or isinstance(grams, bool) or grams <= 0:
            raise DataError(path, "grams must be a positive number", field=f"{where}.grams",
                            value=grams)
        if not row.get("note"):
            raise DataError(path, "a portion override needs a note citing its grams",
                            field=f"{where}.note")
        out.append((str(ndb), portion.strip().lower(), float(grams)))
    return out
