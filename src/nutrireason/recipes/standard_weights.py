"""Standard weights (``standards/data/standard_weights.yaml``): grams of a counted unit SR28
does not weigh ("1 bunch parsley", "1 loaf bread", "1 can coconut milk"), each with its
source. The build tries them only after SR28's own portions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nutrireason.errors import DataError
from nutrireason.standards import standards_dir
from nutrireason.storage import parse_yaml

STANDARD_WEIGHT_METHOD = "standard_weight"
# Counted words that stand for a standard weight's unit.
UNIT_ALIASES = {"bunches": "bunch", "heads": "head", "loaves": "loaf", "cans": "can",
                "tin": "can", "tins": "can"}


@dataclass(frozen=True)
class StandardWeight:
    unit: str
    grams: float
    foods: frozenset[str]
    described: re.Pattern[str] | None
    source: str

    def fits(self, unit: str, ndb_no: str, description: str) -> bool:
        if unit != self.unit:
            return False
        return ndb_no in self.foods or bool(self.described and
                                            self.described.search(description))


def load_standard_weights(path: Path | None = None) -> list[StandardWeight]:
    """The file's entries in order (the first that fits a line wins)."""
    path = path or standards_dir() / "standard_weights.yaml"
    data = parse_yaml(path.read_text(encoding="utf-8")) or {}
    return [_entry(path, index, entry) for index, entry in enumerate(data.get("weights") or [])]


def _entry(path: Path, index: int, entry: dict) -> StandardWeight:
    where = f"weights[{index}]"
    unit, grams, source = entry.get("unit"), entry.get("grams"), entry.get("source")
    foods, described = entry.get("foods") or [], entry.get("described")
    if not isinstance(unit, str) or not isinstance(source, str) or not source.strip():
        raise DataError(path, "a standard weight needs a unit and a source", field=where,
                        value=entry)
    if isinstance(grams, bool) or not isinstance(grams, (int, float)) or grams <= 0:
        raise DataError(path, "grams must be a positive number", field=f"{where}.grams",
                        value=grams)
    if not foods and not described:
        raise DataError(path, "a standard weight needs foods or described", field=where,
                        value=entry)
    if not all(isinstance(food, str) for food in foods):
        raise DataError(path, "foods are SR28 NDB numbers written as text",
                        field=f"{where}.foods", value=foods)
    try:
        pattern = re.compile(described, re.IGNORECASE) if described else None
    except (re.error, TypeError) as error:
        raise DataError(path, f"described is not a regular expression ({error})",
                        field=f"{where}.described", value=described) from error
    return StandardWeight(unit, float(grams), frozenset(foods), pattern, source)


def standard_unit(unit: str | None) -> str:
    """The standard weights' word for a counted unit ("tins" -> "can"; none -> "whole")."""
    if not unit:
        return "whole"
    word = unit.lower()
    return UNIT_ALIASES.get(word, word)


def find_standard(weights: list[StandardWeight], unit: str | None, ndb_no: str,
                  description: str) -> StandardWeight | None:
    """The first entry for ``unit`` that covers the SR28 food."""
    word = standard_unit(unit)
    return next((weight for weight in weights if weight.fits(word, ndb_no, description)), None)
