"""The reviews file (``review export``) as builds read it, for every benchmark: a folder with
``reviews.jsonl`` (each reviewer's last decision per entry, with the reviewer's role) and
``manifest.json`` (format, version, counts, the sha256 of ``reviews.jsonl``).

What a build applies to an entry (:func:`settle`): an adjudicator's decision when there is one
(the latest); else the reviewers' decision when they agree on the label (or all exclude); else
nothing: reviewers who disagree and no adjudicator leave the entry excluded, with that reason
(never whoever clicked last).

A leaf module: ``fam build --reviews`` (:mod:`nutrireason.fam.reviews`) and ``ngqa build
--reviews`` apply what :func:`read_reviews` returns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.storage import sha256_file

FORMAT = "nutrireason-reviews"
VERSION = 2  # 2: each decision names its reviewer's role (version 1 files: all reviewers)
REVIEWS = "reviews.jsonl"
ADJUDICATOR = "adjudicator"
UNSETTLED = "reviewers disagree and no adjudicator has decided"
ACTIONS = ("confirm", "correct", "rationale", "exclude")
# Per benchmark: the labels an entry can have and the reasons to exclude it. FAM-Bench's are
# Appendix F's (Section 3.3's expert check); NGQA's are NutriReason's for its question checks
# (the paper's annotators validate questions, Section 3.2, without listing reasons).
LABELS = {"fam": ("Rec", "NotRec"), "ngqa": ("Yes", "No")}
EXCLUSION_REASONS = {
    "fam": ("missing ingredients", "hidden ingredient", "unclear preparation",
            "portion decisive"),
    "ngqa": ("wrong nutrient tag", "wrong condition link", "ambiguous question",
             "missing information"),
}


def item_key(first: str, second: str) -> str:
    """One entry: a recipe and a condition (FAM-Bench), a user and a food (NGQA)."""
    return f"{first}::{second}"


def check_decision(action: str, after: dict[str, Any], benchmark: str = "fam") -> None:
    """A decision that cannot be applied is refused, naming the field and value."""
    if benchmark not in LABELS:
        raise DataError("review decision", "unknown benchmark", field="benchmark",
                        value=benchmark, expected=" | ".join(LABELS))
    if action not in ACTIONS:
        raise DataError("review decision", "unknown action", field="action", value=action,
                        expected=" | ".join(ACTIONS))
    reasons, labels = EXCLUSION_REASONS[benchmark], LABELS[benchmark]
    if action == "exclude":
        if after.get("exclusion") not in reasons:
            raise DataError("review decision", "an exclusion needs one of the listed reasons",
                            field="exclusion", value=after.get("exclusion"),
                            expected=" | ".join(reasons))
    elif after.get("label") not in labels:
        raise DataError("review decision", "unknown label", field="label",
                        value=after.get("label"), expected=" | ".join(labels))
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


def _verdict(row: dict[str, Any]) -> Verdict:
    return Verdict(row.get("label") if row["action"] != "exclude" else None,
                   tuple(row.get("ingredients") or []), row.get("exclusion"))


def settle(rows: list[dict[str, Any]]) -> Verdict:
    """The verdict on one entry from its decisions (each reviewer's last, with ``at`` and
    ``role``): the latest adjudicator's; else the latest reviewer's when every reviewer gave
    the same label (or every one excluded); else excluded as unsettled."""
    ordered = sorted(rows, key=lambda row: row["at"])
    adjudicated = [row for row in ordered if row.get("role") == ADJUDICATOR]
    if adjudicated:
        return _verdict(adjudicated[-1])
    if len({_verdict(row).label for row in ordered}) == 1:
        return _verdict(ordered[-1])
    return Verdict(None, (), UNSETTLED)


def read_reviews(path: Path, benchmark: str = "fam") -> dict[str, Verdict]:
    """Entry key -> the verdict its decisions settle on (:func:`settle`); a malformed line is
    refused with the file, line and field named; a file of another benchmark is refused."""
    path = reviews_file(path)
    if not path.is_file():
        raise DataError(path, "reviews file not found", expected="a `review export` folder")
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            check_decision(row["action"], row, row.get("benchmark", "fam"))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise DataError(path, f"line {number} is not a review decision", field="action"
                            if isinstance(exc, KeyError) else None,
                            expected=f"JSON with action ({' | '.join(ACTIONS)})") from exc
        except DataError as exc:
            raise DataError(path, f"line {number}: {exc.problem}", field=exc.field,
                            value=exc.value, expected=exc.expected) from exc
        if row.get("benchmark", "fam") != benchmark:
            raise DataError(path, f"line {number} reviews another benchmark", field="benchmark",
                            value=row.get("benchmark"), expected=benchmark)
        key = (row["item"], str(row.get("reviewer", "")))
        if key not in latest or row["at"] >= latest[key]["at"]:
            latest[key] = row
    by_item: dict[str, list[dict[str, Any]]] = {}
    for (item, _), row in latest.items():
        by_item.setdefault(item, []).append(row)
    return {item: settle(rows) for item, rows in by_item.items()}


def load_reviews(reviews: Path | None, benchmark: str, reviewed_only: bool
                 ) -> tuple[dict[str, Verdict] | None, dict[str, Any] | None]:
    """What a build's ``--reviews`` / ``--reviewed-only`` options give: the verdicts (None
    without reviews) and what the build's manifest records of them (file, sha256, entries)."""
    if reviews is None:
        if reviewed_only:
            raise DataError(None, "--reviewed-only needs --reviews", field="--reviewed-only")
        return None, None
    verdicts = read_reviews(reviews, benchmark)
    path = reviews_file(reviews)
    unsettled = sum(v.exclusion == UNSETTLED for v in verdicts.values())
    return verdicts, {"file": str(path.resolve()), "sha256": sha256_file(path),
                      "entries": len(verdicts), "unsettled": unsettled,
                      "reviewed_only": reviewed_only}
