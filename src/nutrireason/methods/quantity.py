"""Reading an answer that is a number in the task's unit (answer shape ``quantity``: grams of
carbohydrate, kilocalories).

The rules, first that finds a number wins: a JSON object's number (the last complete object;
its ``value`` or ``answer`` key, else its only number), ``\\boxed{}``, an answer marker
("Answer: 45 g", "Total carbohydrates: about 45 grams"), then a final answer that holds one
number or one range. A range ("40-50 g", "between 40 and 50 g") reads as its middle. A final
answer with several different numbers and no marker says no one amount: it is not read.
Thousands separators are read ("1,250 kcal"); a negative amount is not an amount.
"""

from __future__ import annotations

import re
from typing import Any

from nutrireason.methods.reading import Reading, boxed, found, json_values, missing, plain

NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
RANGE = re.compile(rf"(?:between\s+)?({NUMBER})\s*(?:-|–|—|to|and)\s*({NUMBER})", re.I)
MARKER = re.compile(r"(?im)^[\s*#>-]*(?:final\s+)?(?:answer|estimate|total(?:\s+[a-z]+){0,3}|"
                    r"carbohydrates?|carbs|energy|calories)\s*[:=]\s*(.+)$")
JSON_KEYS = ("value", "answer", "estimate", "amount", "total")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def amount_in(text: str) -> tuple[float, str] | None:
    """The one amount a short text gives: a range's middle, or its only distinct number;
    None when it gives none or several."""
    span = RANGE.search(text)
    if span is not None and not RANGE.search(text, span.end()):
        rest = text[:span.start()] + text[span.end():]
        if not re.search(r"\d", rest):
            low, high = _number(span.group(1)), _number(span.group(2))
            if low <= high:
                return (low + high) / 2, "range_middle"
    numbers = {_number(n) for n in re.findall(NUMBER, text)}
    if len(numbers) == 1 and not re.search(rf"-\s*(?:{NUMBER})", text):
        return numbers.pop(), "one_number"
    return None


def _json_amount(text: str) -> float | None:
    for value in reversed(json_values(text)):
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, dict):
            keyed = [value[k] for k in JSON_KEYS if isinstance(value.get(k), int | float)
                     and not isinstance(value.get(k), bool)]
            numbers = keyed or [v for v in value.values()
                                if isinstance(v, int | float) and not isinstance(v, bool)]
            if len(numbers) == 1:
                return float(numbers[0])
    return None


def read_quantity(text: str) -> Reading:
    """The amount a final answer gives (see the module's rules), as a float."""
    amount: Any = _json_amount(text)
    if amount is not None:
        return found(amount, "json") if amount >= 0 else missing()
    cleaned = plain(text)
    inside = boxed(text)
    candidates = [("boxed", inside)] if inside is not None else []
    candidates += [("marker", m.group(1)) for m in reversed(list(MARKER.finditer(cleaned)))]
    candidates.append(("whole", cleaned))
    for rule, part in candidates:
        got = amount_in(part)
        if got is not None:
            return found(got[0], rule if rule != "whole" else got[1])
        if rule == "marker":
            break  # the last marker says no one amount: the rest is working, not an answer
    return missing()
