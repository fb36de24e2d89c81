"""How ``fam build --reviews FILE [--reviewed-only]`` applies expert decisions to the
annotation pool (the file format is :mod:`nutrireason.reviewfile`)."""

from __future__ import annotations

from typing import Any

from nutrireason.reviewfile import Verdict, item_key

NOT_REVIEWED = "not reviewed (--reviewed-only)"
# The side ("rec" or "not_rec") the rule-grounded annotation gave a reviewed entry: the samples
# are drawn on it, so that a correction changes the gold of the instances holding the entry and
# nothing else (:func:`nutrireason.fam.instances.dish_instances`).
ANNOTATED = "annotated_side"


def apply_reviews(annotations: list[dict[str, Any]], verdicts: dict[str, Verdict],
                  reviewed_only: bool = False) -> list[dict[str, Any]]:
    """The pool with each reviewed entry confirmed, corrected (label, rationale) or excluded
    (moved to ``excluded_entries`` with the expert's reason); with ``reviewed_only`` the
    entries nobody reviewed move to ``excluded_entries`` too ("not reviewed"), so that no
    sample draws them, as a ranking option either. Every reviewed entry, kept or excluded,
    records the side the annotation gave it (``annotated_side``)."""
    out = []
    for row in annotations:
        entries = {"rec": [], "not_rec": []}
        excluded = list(row.get("excluded_entries") or [])
        for side in ("rec", "not_rec"):
            for entry in row.get(side) or []:
                verdict = verdicts.get(item_key(row["recipe_id"], entry["condition"]))
                if verdict is None:
                    if reviewed_only:
                        excluded.append({"condition": entry["condition"],
                                         "provenance": entry.get("provenance", []),
                                         "reason": NOT_REVIEWED})
                    else:
                        entries[side].append(entry)
                    continue
                annotated = entry.get(ANNOTATED, side)
                if verdict.label is None:
                    excluded.append({"condition": entry["condition"],
                                     "provenance": entry.get("provenance", []),
                                     "reason": f"expert: {verdict.exclusion}",
                                     ANNOTATED: annotated})
                    continue
                target = "rec" if verdict.label == "Rec" else "not_rec"
                entries[target].append({**entry, "ingredients": list(verdict.ingredients),
                                        "reviewed": True, ANNOTATED: annotated})
        out.append({**row, "rec": _ordered(entries["rec"]),
                    "not_rec": _ordered(entries["not_rec"]), "excluded_entries": excluded})
    return out


def _ordered(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda e: e["condition"])
