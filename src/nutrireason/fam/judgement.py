"""How an annotation becomes a dish's standing for a set of target conditions.

Shared by the instance builder (gold rankings) and the rule-based reference method, so both read
the annotation the same way:

* a condition's *severity* is the number of distinct conflicts behind a NotRec decision (each
  limit concept or food and each nutrient veto counts once, an avoid concept or food twice);
  the rule fallback and overruled Rec evidence do not count;
* a dish's *utility* for one condition is +1 (Rec), 0 (neutral) or -severity (NotRec), and for a
  set of target conditions the sum over the set;
* a dish's *label* for the set is "not_recommend" when any target is NotRec, "recommend" when
  none is and at least one is Rec, else "neutral".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

REC, NOT_REC = "recommend", "not_recommend"
NEUTRAL = "neutral"


def conflicts(provenance: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The distinct (kind, what) conflicts behind a NotRec decision."""
    found: set[tuple[str, str]] = set()
    for entry in provenance:
        if entry.get("overruled"):
            continue
        if entry["rule"] == "ingredient_concept":
            found.add((entry["kb_side"], entry["concept"]))
        elif entry["rule"] == "food_list":
            found.add((entry["kb_side"], f"food:{entry['food']}"))
        elif entry["rule"] == "nutrient_veto":
            found.add(("veto", entry["nutrient"]))
    return found


def severity(provenance: Iterable[Mapping[str, Any]]) -> int:
    """Distinct conflicts, avoid concepts counted twice; at least 1 for a NotRec decision."""
    found = conflicts(provenance)
    return max(1, sum(2 if kind == "avoid" else 1 for kind, _ in found))


def avoid_violations(provenance: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The avoid-side concept firings (condition added by the caller)."""
    return [{"concept": e.get("concept") or f"food:{e['food']}", "ingredient": e["ingredient"]}
            for e in provenance
            if e.get("rule") in ("ingredient_concept", "food_list") and e.get("kb_side") == "avoid"
            and not e.get("overruled")]


class Standing:
    """One dish's annotation per condition: side, severity and avoid violations."""

    def __init__(self, rec: Iterable[Mapping[str, Any]], not_rec: Iterable[Mapping[str, Any]]):
        self.side: dict[str, str] = {}
        self.severity: dict[str, int] = {}
        self.evidence: dict[str, list[str]] = {}
        self.avoid: dict[str, list[dict[str, str]]] = {}
        for entry in rec:
            self.side[entry["condition"]] = REC
            self.evidence[entry["condition"]] = list(entry["ingredients"])
        for entry in not_rec:
            condition = entry["condition"]
            self.side[condition] = NOT_REC
            self.evidence[condition] = list(entry["ingredients"])
            self.severity[condition] = severity(entry["provenance"])
            self.avoid[condition] = avoid_violations(entry["provenance"])

    @classmethod
    def of(cls, annotation: Mapping[str, Any]) -> Standing:
        """The standing of one pool annotation (``annotations.jsonl`` shape)."""
        return cls(annotation["rec"], annotation["not_rec"])

    def utility(self, conditions: Iterable[str]) -> int:
        """+1 per Rec target, -severity per NotRec target."""
        total = 0
        for condition in conditions:
            side = self.side.get(condition)
            total += 1 if side == REC else -self.severity[condition] if side == NOT_REC else 0
        return total

    def label(self, conditions: Iterable[str]) -> str:
        """recommend / not_recommend / neutral for the target set."""
        sides = [self.side.get(c) for c in conditions]
        if NOT_REC in sides:
            return NOT_REC
        return REC if REC in sides else NEUTRAL

    def violations(self, conditions: Iterable[str]) -> list[dict[str, str]]:
        """Avoid-list violations for the targets, each with its condition."""
        return [{"condition": c, **v} for c in conditions for v in self.avoid.get(c, [])]

    def eligible(self, conditions: Iterable[str]) -> bool:
        """No target condition is NotRec."""
        return all(self.side.get(c) != NOT_REC for c in conditions)
