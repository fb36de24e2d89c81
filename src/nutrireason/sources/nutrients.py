"""The 16 nutrients of NGQA Table 4 for the readers: tidy names, SR/FNDDS numbers, units.

The numbers are the SR28 ``Nutr_No`` values, which FNDDS uses as its nutrient codes too.
Every value is per 100 g of edible food. Units follow SR28's NUTR_DEF (``µg`` is U+00B5).
"""

from __future__ import annotations

from dataclasses import dataclass

from nutrireason.standards import load_standards


@dataclass(frozen=True)
class Nutrient:
    """One nutrient: the tidy column name readers output, its SR number and its unit."""

    name: str
    number: int
    unit: str


_MICROGRAM = {"µg", "μg", "mcg", "ug"}


def normalize_unit(unit: str) -> str:
    """Canonical spelling of a unit: lower case, and every microgram spelling as ``µg``."""
    text = " ".join(str(unit).split()).lower()
    return "µg" if text in _MICROGRAM else text


def _from_standards() -> tuple[Nutrient, ...]:
    """The 16 nutrients as ``standards/data/nutrients.yaml`` defines them (one source of truth)."""
    rows = load_standards().nutrients.nutrients
    return tuple(Nutrient(n.id, n.sr_number, normalize_unit(n.unit)) for n in rows)


NUTRIENTS: tuple[Nutrient, ...] = _from_standards()
NUTRIENT_NAMES: tuple[str, ...] = tuple(n.name for n in NUTRIENTS)
BY_NAME: dict[str, Nutrient] = {n.name: n for n in NUTRIENTS}
BY_NUMBER: dict[int, Nutrient] = {n.number: n for n in NUTRIENTS}
