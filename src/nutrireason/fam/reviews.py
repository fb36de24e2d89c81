"""Expert review decisions as a build reads them: the versioned reviews file that ``review
export`` writes and how ``fam build --reviews FILE [--reviewed-only]`` applies it.

A reviews folder holds ``reviews.jsonl`` (each reviewer's last decision per entry) and
``manifest.json`` (format, version, counts, the sha256 of ``reviews.jsonl``). Where several
reviewers decided one entry, the build applies the latest decision; ``review stats`` shows where
they disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError

FORMAT = "nutrireason-reviews"
VERSION = 1
REVIEWS = "reviews.jsonl"
ACTIONS = ("confirm", "correct", "rationale", "exclude")
# FAM-Bench Appendix F's reasons for leaving an entry out (Section 3.3's expert check).
EXCLUSION_REASONS = ("missing ingredients", "hidden ingredient", "unclear preparation",
                     "portion decisive")
LABELS = ("Rec", "NotRec")


def item_key(recipe_id: str, condition: str) -> str:
    """One pool entry: a recipe and a condition."""
    return f"{recipe_id}::{condition}"


def check_decision(action: str, after: dict[str, Any]) -> None:
    """A decision that cannot be applied is refused, naming the field and value."""
    if action not in ACTIONS:
        raise DataError("review decision", "unknown action", field="action", value=action,
                        expected=" | ".join(ACTIONS))
    if action == "exclude":
        if after.get("exclusion") not in EXCLUSION_REASONS:
            raise DataError("review decision", "an exclusion needs one of the paper's reasons",
                            field="exclusion", value=after.get("exclusion"),
                            expected=" | ".join(EXCLUSION_REASONS))
    elif after.get("label") not in LABELS:
        raise DataError("review decision", "unknown label", field="label",
                        value=after.get("label"), expected=" | ".join(LABELS))
    ingredients = after.get("ingredients", [])
    if not isinstance(ingredients, list) or not all(isinstance(i, str) for i in ingredients):
        raise DataError("review decision", "ingredients must be a list of names",
                        field="ingredients", value=ingredients)


def reviews_file(path: Path) -> Path:
    """``path`` or ``path/reviews.jsonl``."""
    return path / REVIEWS if path.is_dir() else path


@dataclass(frozen=True)
class Verdict:
    """The decision a build applies to one entry."""

    label: str | None  # None: excluded
    ingredients: tuple[str, ...]
    exclusion: str | None


def read_reviews(path: Path) -> dict[str, Verdict]:
    """Entry key -> the latest decision among its reviewers; a malformed line is refused with
    the file, line and field named."""
    path = reviews_file(path)
    if not path.is_file():
        raise DataError(path, "reviews file not found", expected="a `review export` folder")
    latest: dict[str, tuple[str, Verdict]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            check_decision(row["action"], row)
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise DataError(path, f"line {number} is not a review decision", field="action"
                            if isinstance(exc, KeyError) else None,
                            expected=f"JSON with action ({' | '.join(ACTIONS)})") from exc
        except DataError as exc:
            raise DataError(path, f"line {number}: {exc.problem}", field=exc.field,
                            value=exc.value, expected=exc.expected) from exc
        verdict = Verdict(row.get("label") if row["action"] != "exclude" else None,
                          tuple(row.get("ingredients") or []), row.get("exclusion"))
        if row["item"] not in latest or row["at"] >= latest[row["item"]][0]:
            latest[row["item"]] = (row["at"], verdict)
    return {item: verdict for item, (_, verdict) in latest.items()}


def apply_reviews(annotations: list[dict[str, Any]], verdicts: dict[str, Verdict],
                  reviewed_only: bool = False) -> list[dict[str, Any]]:
    """The pool with each reviewed entry confirmed, corrected (label, rationale) or excluded
    (moved to ``excluded_entries`` with the expert's reason); with ``reviewed_only`` the
    entries nobody reviewed leave the pool."""
    out = []
    for row in annotations:
        entries = {"rec": [], "not_rec": []}
        excluded = list(row.get("excluded_entries") or [])
        for side in ("rec", "not_rec"):
            for entry in row.get(side) or []:
                verdict = verdicts.get(item_key(row["recipe_id"], entry["condition"]))
                if verdict is None:
                    if not reviewed_only:
                        entries[side].append(entry)
                    continue
                if verdict.label is None:
                    excluded.append({"condition": entry["condition"],
                                     "provenance": entry.get("provenance", []),
                                     "reason": f"expert: {verdict.exclusion}"})
                    continue
                target = "rec" if verdict.label == "Rec" else "not_rec"
                entries[target].append({**entry, "ingredients": list(verdict.ingredients),
                                        "reviewed": True})
        out.append({**row, "rec": _ordered(entries["rec"]),
                    "not_rec": _ordered(entries["not_rec"]), "excluded_entries": excluded})
    return out


def _ordered(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda e: e["condition"])
