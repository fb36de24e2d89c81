"""Agreement over review decisions: per condition, the share of labels kept, corrections by
kind, and rationale edits counted apart (a kept label with other ticks is a kept label);
between reviewers, Cohen's kappa (scikit-learn) for each pair and Fleiss' kappa (statsmodels)
over the entries every reviewer decided; between the rules and the experts, raw agreement and
Cohen's kappa. A decision's category is its label, or ``excluded``. Agreement is over the
reviewers' own decisions: an adjudicator decides only where they disagree, and is counted in
``adjudicated``."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

from nutrireason.review.accounts import ADJUDICATOR
from nutrireason.review.store import Decision

CATEGORIES = ("Rec", "NotRec", "excluded")


def decisions_from_file(path: Path) -> list[Decision]:
    """The decisions of a ``review export`` folder (or its reviews.jsonl), in file order."""
    from nutrireason.reviewfile import read_reviews, reviews_file

    path = reviews_file(path)
    read_reviews(path)  # checks every line, naming the one that is malformed
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Decision(index, row.get("benchmark", "fam"), row["item"], row["reviewer"],
                     row["at"], row["action"], row.get("before") or {},
                     {key: row.get(key) for key in ("label", "ingredients", "exclusion",
                                                    "note")}, row.get("role", "reviewer"))
            for index, row in enumerate(rows, 1)]


def category(decision: Decision) -> str:
    return decision.label if decision.action != "exclude" and decision.label else "excluded"


def kind(decision: Decision) -> str:
    """What happened to the label: confirm (kept, whatever the ticks); Rec->NotRec or
    NotRec->Rec; exclude: <reason>."""
    if decision.action == "exclude":
        return f"exclude: {decision.after.get('exclusion')}"
    before = decision.before.get("label")
    if decision.label != before:
        return f"{before}->{decision.label}"
    return "confirm"


def rationale_edited(decision: Decision) -> bool:
    """The label was kept and the ticked ingredients differ from the proposed ones."""
    return kind(decision) == "confirm" and \
        sorted(decision.after.get("ingredients") or []) != \
        sorted(decision.before.get("ingredients") or [])


def condition_of(item: str) -> str:
    return item.rsplit("::", 1)[-1]


def review_stats(latest: dict[tuple[str, str], Decision]) -> dict[str, Any]:
    """Statistics over each reviewer's last decision per entry (``ReviewStore.latest``)."""
    everyone = sorted(latest.values(), key=lambda d: d.id)
    decisions = [d for d in everyone if d.role != ADJUDICATOR]
    by_condition: dict[str, Counter] = defaultdict(Counter)
    edits: Counter = Counter()
    for decision in decisions:  # the entry's condition (FAM-Bench) or level (NGQA)
        group = decision.before.get("group") or condition_of(decision.item)
        by_condition[group][kind(decision)] += 1
        edits[group] += rationale_edited(decision)
    conditions = {
        name: {"decisions": sum(kinds.values()),
               "label_kept_rate": kinds["confirm"] / sum(kinds.values()),
               "rationale_edits": edits[name],
               "kinds": dict(sorted(kinds.items()))}
        for name, kinds in sorted(by_condition.items())}
    return {"decisions": len(decisions),
            "adjudicated": len({d.item for d in everyone if d.role == ADJUDICATOR}),
            "rationale_edits": sum(edits.values()),
            "items": len({d.item for d in decisions}),
            "reviewers": sorted({d.reviewer for d in decisions}),
            "kinds": dict(sorted(Counter(kind(d) for d in decisions).items())),
            "conditions": conditions,
            "inter_reviewer": inter_reviewer(decisions),
            "rules_vs_experts": rules_vs_experts(decisions)}


def inter_reviewer(decisions: list[Decision]) -> dict[str, Any]:
    """Cohen's kappa per reviewer pair (entries both decided) and Fleiss' kappa over the
    entries all reviewers decided (three or more reviewers)."""
    from sklearn.metrics import cohen_kappa_score

    by_item: dict[str, dict[str, str]] = defaultdict(dict)
    for decision in decisions:
        by_item[decision.item][decision.reviewer] = category(decision)
    reviewers = sorted({d.reviewer for d in decisions})
    pairs = []
    for first, second in combinations(reviewers, 2):
        shared = sorted(i for i, r in by_item.items() if first in r and second in r)
        a = [by_item[i][first] for i in shared]
        b = [by_item[i][second] for i in shared]
        pairs.append({"reviewers": [first, second], "items": len(shared),
                      "agreement": _share(a, b),
                      "cohen_kappa": _kappa(cohen_kappa_score, a, b)})
    result: dict[str, Any] = {"pairs": pairs, "fleiss_kappa": None, "fleiss_items": 0}
    if len(reviewers) >= 3:
        complete = [r for r in by_item.values() if len(r) == len(reviewers)]
        result["fleiss_items"] = len(complete)
        if complete:
            result["fleiss_kappa"] = fleiss([list(r.values()) for r in complete])
    return result


def fleiss(ratings: list[list[str]]) -> float | None:
    """Fleiss' kappa (statsmodels) for items each rated by the same number of raters."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    table = [[row.count(c) for c in CATEGORIES] for row in ratings]
    value = float(fleiss_kappa(table, method="fleiss"))
    return None if value != value else value  # NaN (no variation at all) -> None


def rules_vs_experts(decisions: list[Decision]) -> dict[str, Any]:
    """The rules' proposed label against each expert decision."""
    from sklearn.metrics import cohen_kappa_score

    proposed = [d.before.get("label") or "" for d in decisions]
    decided = [category(d) for d in decisions]
    return {"decisions": len(decisions), "agreement": _share(proposed, decided),
            "cohen_kappa": _kappa(cohen_kappa_score, proposed, decided)}


def _share(a: list[str], b: list[str]) -> float | None:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None


def _kappa(function: Any, a: list[str], b: list[str]) -> float | None:
    """Cohen's kappa, or None when undefined (no entries, or one category throughout)."""
    if not a or len(set(a) | set(b)) < 2:
        return None
    value = float(function(a, b))
    return None if value != value else value
