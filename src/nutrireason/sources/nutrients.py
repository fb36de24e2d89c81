"""The 16 nutrients of NGQA Table 4: tidy names, SR/FNDDS nutrient numbers and units.

The numbers are the SR28 ``Nutr_No`` values, which FNDDS uses as its nutrient codes too.
Every value is per 100 g of edible food. Units follow SR28's NUTR_DEF (``µg`` is U+00B5).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Nutrient:
    """One nutrient: the tidy column name readers output, its SR number and its unit."""

    name: str
    number: int
    unit: str


NUTRIENTS: tuple[Nutrient, ...] = (
    Nutrient("calories", 208, "kcal"),
    Nutrient("carbohydrates", 205, "g"),
    Nutrient("protein", 203, "g"),
    Nutrient("saturated_fat", 606, "g"),
    Nutrient("cholesterol", 601, "mg"),
    Nutrient("sugar", 269, "g"),
    Nutrient("fiber", 291, "g"),
    Nutrient("sodium", 307, "mg"),
    Nutrient("potassium", 306, "mg"),
    Nutrient("phosphorus", 305, "mg"),
    Nutrient("iron", 303, "mg"),
    Nutrient("calcium", 301, "mg"),
    Nutrient("folic_acid", 431, "µg"),
    Nutrient("vitamin_c", 401, "mg"),
    Nutrient("vitamin_d", 328, "µg"),
    Nutrient("vitamin_b12", 418, "µg"),
)

NUTRIENT_NAMES: tuple[str, ...] = tuple(n.name for n in NUTRIENTS)
BY_NAME: dict[str, Nutrient] = {n.name: n for n in NUTRIENTS}
BY_NUMBER: dict[int, Nutrient] = {n.number: n for n in NUTRIENTS}

_MICROGRAM = {"µg", "μg", "mcg", "ug"}


def normalize_unit(unit: str) -> str:
    """Canonical spelling of a unit: lower case, and every microgram spelling as ``µg``."""
    text = " ".join(str(unit).split()).lower()
    return "µg" if text in _MICROGRAM else text
