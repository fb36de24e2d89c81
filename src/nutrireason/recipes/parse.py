"""Ingredient lines -> quantity, unit, food name, preparation, with ``ingredient-slicer``."""

from __future__ import annotations

import multiprocessing
import os
import re
from dataclasses import dataclass, field, replace

from ingredient_slicer import IngredientSlicer

MASS_UNITS = {"gram", "kilogram", "milligram", "ounce", "pound"}
VOLUME_UNITS = {"cup", "tablespoon", "teaspoon", "milliliter", "liter", "deciliter", "quart",
                "pint", "gallon", "fluid ounce"}
# Units the slicer reports that carry no weight (quantity left unknown).
VAGUE_UNITS = {"to taste", "handful", "splash", "sprinkle", "drizzle"}
# Small culinary measures in teaspoons (common kitchen definitions: a pinch is 1/16 teaspoon,
# a dash 1/8 teaspoon).
SMALL_MEASURES = {"pinch": 1 / 16, "dash": 1 / 8}
CONTAINERS = {"can", "tin", "jar", "package", "packet", "bag", "box", "bottle", "carton",
              "container"}
FILLER_WORDS = {"of", "and", "or", "a", "an", "the", "some", "fresh", "freshly", "plus",
                "about", "approximately", "optional", "x"}


@dataclass
class ParsedLine:
    """One ingredient line, parsed. ``kind``: quantified, unquantified or header."""

    line: str
    kind: str
    quantity: float | None = None
    unit: str | None = None
    unit_kind: str | None = None  # mass | volume | count | vague
    food: str | None = None
    prep: list[str] = field(default_factory=list)
    size: list[str] = field(default_factory=list)
    problem: str | None = None
    generic_grams: float | None = None  # ingredient-slicer's density-based estimate
    raw_food: str | None = None  # ingredient-slicer's food name, lower-cased


_CACHE: dict[str, ParsedLine] = {}


def normalise(line: str) -> str:
    """Whitespace collapsed and HTML tags removed ("<bdi>1 cup</bdi> broth" -> "1 cup broth")."""
    return " ".join(re.sub(r"<[^>]+>", " ", line).split())


def parse_line(line: str) -> ParsedLine:
    """Parse one raw ingredient line (identical lines are parsed once per process)."""
    text = normalise(line)
    if text not in _CACHE:
        _CACHE[text] = _parse(text)
    return replace(_CACHE[text], line=line)


def parse_many(lines: list[str], workers: int = 1) -> None:
    """Parse the distinct lines not parsed yet, on ``workers`` fresh processes (fills the cache).

    ingredient-slicer's output depends on set iteration order (e.g. "packed" vs "lightly
    packed"), which Python randomises per process; the workers run with PYTHONHASHSEED=0 so a
    build gives the same parse, byte for byte, every time.
    """
    todo = sorted({normalise(line) for line in lines} - set(_CACHE))
    if not todo:
        return
    previous = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = "0"
    try:
        with multiprocessing.get_context("spawn").Pool(max(1, workers)) as pool:
            parsed = pool.map(_parse, todo, chunksize=256)
    finally:
        if previous is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = previous
    _CACHE.update(zip(todo, parsed, strict=True))


def _parse(text: str) -> ParsedLine:
    line = text
    if not re.search(r"[a-z]", text, re.I) or text.endswith(":"):
        return ParsedLine(line, "header")
    sliced = IngredientSlicer(text).to_json()
    unit = sliced.get("standardized_unit")
    quantity, problem = _quantity(sliced.get("quantity"))
    if unit in SMALL_MEASURES and quantity is not None:
        quantity, unit = quantity * SMALL_MEASURES[unit], "teaspoon"
    food = clean_food(sliced.get("food"), unit)
    parsed = ParsedLine(line, "unquantified", unit=unit, food=food,
                        prep=list(sliced.get("prep") or []),
                        size=list(sliced.get("size_modifiers") or []), problem=problem,
                        generic_grams=_quantity(sliced.get("gram_weight"))[0],
                        raw_food=" ".join(str(sliced.get("food") or "").lower().split()) or None)
    if quantity is None or unit in VAGUE_UNITS:
        parsed.unit_kind = "vague" if unit in VAGUE_UNITS else None
        return parsed
    parsed.kind = "quantified"
    parsed.quantity = quantity
    parsed.unit_kind = unit_kind(unit)
    return parsed


def unit_kind(unit: str | None) -> str:
    """mass, volume or count (no unit, or a word such as clove, slice, egg)."""
    if unit in MASS_UNITS:
        return "mass"
    if unit in VOLUME_UNITS:
        return "volume"
    return "count"


def _quantity(value: object) -> tuple[float | None, str | None]:
    if value in (None, ""):
        return None, None
    try:
        number = float(str(value))
    except ValueError:
        return None, f"non-numeric quantity {value!r}"
    if number <= 0:
        return None, f"quantity {value!r} is not positive"
    return number, None


def clean_food(food: object, unit: str | None) -> str | None:
    """Lower-case food name without container words, a repeated unit word or filler."""
    if not food:
        return None
    words = [w for w in re.split(r"[^a-z0-9%\-']+", str(food).lower()) if w]
    unit_words = {unit, f"{unit}s"} if unit else set()
    kept = [w for w in words if w not in CONTAINERS and w not in FILLER_WORDS]
    if kept and kept[0] in unit_words and len(kept) > 1:
        kept = kept[1:]
    return " ".join(kept) or None
