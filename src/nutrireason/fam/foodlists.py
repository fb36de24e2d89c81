"""How the knowledge base's food lists and ingredient qualifiers are read.

``standards/data/fam_food_lists.yaml`` gives every food named on a side of a condition file one
reading: ``match`` (the SR28 foods that are instances of it, by canonical ingredient name or
SR28 description pattern), ``covered_by`` (a concept on the condition's list carries it) or
``not_in_dish`` (advice no ingredient can show). Qualifiers ("gluten-free", "low-sodium", ...)
found on an ingredient line survive into the canonical name, change its concepts and block the
food-list entries they name (gluten-free oats are not "oats unless labelled gluten-free").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.fam.kb import CONCEPTS, SIDES, ConditionKB
from nutrireason.fam.vocabulary import name_pattern, read_yaml, string_list
from nutrireason.standards.loader import standards_dir

QUALIFIER_STATE = "qual:"


def food_lists_path() -> Path:
    """The packaged food-list file."""
    return standards_dir() / "fam_food_lists.yaml"


@dataclass(frozen=True)
class Qualifier:
    """A line qualifier: the word it adds to the name and the concepts it removes or adds."""

    name: str
    label: str
    removes: frozenset[str]
    adds: frozenset[str]


@dataclass(frozen=True)
class FoodReading:
    """One knowledge-base food: how an ingredient is an instance of it (or why none is)."""

    food: str
    canonicals: frozenset[str]
    patterns: tuple[Any, ...]
    blocked_by: frozenset[str]
    covered_by: str | None
    not_in_dish: str | None

    def matches(self, canonical: str, description: str, qualifiers: frozenset[str]) -> bool:
        if self.blocked_by & qualifiers:
            return False
        text = description.lower()
        return canonical in self.canonicals or any(p.search(text) for p in self.patterns)


@dataclass(frozen=True)
class FoodLists:
    """All readings and qualifiers, with lookups."""

    path: Path
    readings: dict[str, FoodReading]
    qualifiers: dict[str, Qualifier]
    _memo: dict[tuple, frozenset[str]] = field(default_factory=dict, init=False, repr=False,
                                               compare=False, hash=False)

    @classmethod
    def load(cls, path: str | Path | None = None) -> FoodLists:
        path = Path(path) if path is not None else food_lists_path()
        raw = read_yaml(path, "food-list")
        if not isinstance(raw, dict) or not isinstance(raw.get("foods"), dict):
            raise DataError(path, "top level must be a mapping with a 'foods' mapping",
                            field="foods")
        qualifiers = {name: _qualifier(path, name, value)
                      for name, value in (raw.get("qualifiers") or {}).items()}
        readings = {food: _reading(path, food, value, qualifiers)
                    for food, value in raw["foods"].items()}
        return cls(path, readings, qualifiers)

    def check_covers(self, kb: dict[str, ConditionKB]) -> None:
        """Every food on every side of every condition has a reading; a ``covered_by``
        concept is on the same side of that condition."""
        for condition, entry in kb.items():
            for side in SIDES:
                for food in entry.side(side).foods:
                    reading = self.readings.get(food)
                    where = f"{condition}.{side}.foods"
                    if reading is None:
                        raise DataError(self.path, "knowledge-base food has no reading",
                                        field=f"foods.{food}", value=where,
                                        expected="an entry with match, covered_by or "
                                                 "not_in_dish")
                    if reading.covered_by and reading.covered_by not in entry.side(side).concepts:
                        raise DataError(self.path, f"covered_by concept is not on {where}'s "
                                        "concept list", field=f"foods.{food}.covered_by",
                                        value=reading.covered_by)

    def foods_of(self, canonical: str, description: str,
                 qualifiers: frozenset[str]) -> frozenset[str]:
        """The knowledge-base foods an ingredient is an instance of (memoised: the readings
        are immutable and the same foods recur in every recipe)."""
        key = (canonical, description, qualifiers)
        if key not in self._memo:
            self._memo[key] = frozenset(food for food, reading in self.readings.items()
                                        if reading.matches(canonical, description, qualifiers))
        return self._memo[key]

    def qualify(self, canonical: str, concepts: frozenset[str], qualifiers: frozenset[str]
                ) -> tuple[str, frozenset[str]]:
        """The canonical name and concepts once the line's qualifiers apply."""
        for name in sorted(qualifiers):
            qualifier = self.qualifiers.get(name)
            if qualifier is None:
                continue
            concepts = (concepts - qualifier.removes) | qualifier.adds
            words = qualifier.label.replace("-", " ")
            if qualifier.label not in canonical and words not in canonical:
                canonical = f"{qualifier.label} {canonical}"
        return canonical, concepts


def line_qualifiers(states: list[str] | None, description: str | None) -> frozenset[str]:
    """Qualifier names from a resolved line's states and its SR28 description."""
    found = {s[len(QUALIFIER_STATE):] for s in states or [] if s.startswith(QUALIFIER_STATE)}
    if "gluten-free" in (description or "").lower():
        found.add("gluten_free")
    return frozenset(found)


def _qualifier(path: Path, name: str, value: Any) -> Qualifier:
    where = f"qualifiers.{name}"
    if not isinstance(value, dict) or not isinstance(value.get("label"), str) \
            or not isinstance(value.get("source"), str):
        raise DataError(path, "a qualifier needs a label and a source", field=where, value=value)
    concepts = {*string_list(path, f"{where}.removes", value.get("removes")),
                *string_list(path, f"{where}.adds", value.get("adds"))}
    unknown = sorted(concepts - set(CONCEPTS))
    if unknown:
        raise DataError(path, "unknown concept", field=where, value=unknown[0])
    return Qualifier(name, value["label"], frozenset(value.get("removes") or []),
                     frozenset(value.get("adds") or []))


def _reading(path: Path, food: str, value: Any, qualifiers: dict[str, Qualifier]
             ) -> FoodReading:
    where = f"foods.{food}"
    kinds = [k for k in ("match", "covered_by", "not_in_dish") if k in (value or {})]
    if not isinstance(value, dict) or len(kinds) != 1 or \
            set(value) - {"match", "covered_by", "not_in_dish", "blocked_by"}:
        raise DataError(path, "a food needs exactly one of match, covered_by or not_in_dish "
                        "(and may name blocked_by)", field=where, value=value)
    blocked = string_list(path, f"{where}.blocked_by", value.get("blocked_by"))
    for name in blocked:
        if name not in qualifiers:
            raise DataError(path, "unknown qualifier", field=f"{where}.blocked_by", value=name)
    match = value.get("match") or {}
    if "match" in value and (not isinstance(match, dict) or not match
                             or set(match) - {"canonicals", "description_any"}):
        raise DataError(path, "match must map canonicals and/or description_any",
                        field=f"{where}.match", value=match)
    covered = value.get("covered_by")
    if covered is not None and covered not in CONCEPTS:
        raise DataError(path, "unknown concept", field=f"{where}.covered_by", value=covered)
    canonicals = string_list(path, f"{where}.match.canonicals", match.get("canonicals"))
    patterns = string_list(path, f"{where}.match.description_any", match.get("description_any"))
    return FoodReading(food, frozenset(c.lower() for c in canonicals),
                       tuple(name_pattern(p) for p in patterns), frozenset(blocked), covered,
                       value.get("not_in_dish"))
