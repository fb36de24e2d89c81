"""Servings from a number or a recipe's yield text."""

from __future__ import annotations

import re
from typing import Any

MAX_SERVINGS = 500.0
_NUMBER = r"\d+(?:\.\d+)?(?:\s*/\s*\d+)?"


def _number(text: str) -> float:
    if "/" in text:
        top, bottom = (float(part) for part in text.split("/"))
        return top / bottom if bottom else 0.0
    return float(text)


def parse_yield(text: str) -> float | None:
    """The count a yield text gives: "4" -> 4, "serves 4-6" / "4 to 6 servings" -> 5,
    "Makes 12 bites" -> 12, "2 dozen cookies" -> 24, "2 loaves" -> 2, "Varies" -> None.
    Sizes ("one 9-inch pie") are not counts."""
    cleaned = re.sub(r"\d+(?:\.\d+)?\s*(?:-|\s)?\s*(?:inch|in\.|\"|cm|oz|ounce|g|lb)\b", " ",
                     str(text).lower())
    ranged = re.search(rf"({_NUMBER})\s*(?:-|–|to|or)\s*({_NUMBER})", cleaned)
    if ranged:
        low, high = _number(ranged.group(1)), _number(ranged.group(2))
        return (low + high) / 2
    dozens = re.search(rf"({_NUMBER})\s+dozen", cleaned)
    if dozens:
        return _number(dozens.group(1)) * 12
    single = re.search(_NUMBER, cleaned)
    if single:
        return _number(single.group(0))
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "a dozen": 12, "dozen": 12}
    for word, value in words.items():
        if re.search(rf"\b{word}\b", cleaned):
            return float(value)
    return None


# "1e308" (read as 1), "-3" (read as 3), "10^6": refused, not misread
_MISREAD = re.compile(r"\d\s*[eE][+-]?\d|\^|\*\*|(?:^|[^\d\s])\s*[-−]\s*\d")


def servings_from(value: Any) -> float | None:
    """Servings from a record field: None stays None; text is read with :func:`parse_yield`
    (unreadable text is None); a count <= 0 or above 500 raises ValueError naming it."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"servings must be a number or a yield text, not {value!r}")
    if isinstance(value, str) and _MISREAD.search(value):
        raise ValueError(f"servings {value!r} is not a plausible count (a negative number, an "
                         "exponent or scientific notation)")
    count = float(value) if isinstance(value, int | float) else parse_yield(str(value))
    if count is None:
        return None
    if not count > 0 or count > MAX_SERVINGS:
        raise ValueError(f"servings {value!r} is not a plausible count (expected more than 0 "
                         f"and at most {MAX_SERVINGS:g})")
    return count
