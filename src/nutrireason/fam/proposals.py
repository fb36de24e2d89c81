"""The optional LLM proposal step of FAM-Bench annotation (section 3.3, "Validation").

``nutrireason fam propose`` asks a model, through the run engine (cache, retries, resume,
per-sample records), for a Rec / NotRec / neutral side per condition for every annotated
recipe. ``nutrireason fam annotate --proposals RUN`` then cross-checks: as in the paper, a
recipe whose rule-based annotation and LLM proposal disagree on the Rec/NotRec side of any
condition is dropped, and so is a recipe without a usable proposal (error or unparseable
answer); a condition one side calls neutral is not a disagreement. Dropped recipes keep their
rule entries under ``dropped`` so the decision can be audited.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.fam.instances import dish_view
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import ConditionKB
from nutrireason.io import write_jsonl_atomic
from nutrireason.runs.records import RECORDS_FILE, read_records

TASK_PROPOSE = "fam_propose"
SIDES = {"Rec": REC, "NotRec": NOT_REC}
NO_PROPOSAL = "no usable LLM proposal"
DISAGREE = "rule/LLM disagreement"


def proposal_items(recipes: list[dict[str, Any]], kb: dict[str, ConditionKB]
                   ) -> list[dict[str, Any]]:
    """One proposal item per kept recipe: the recipe as a model sees it and all conditions."""
    conditions = list(kb)
    return [{"id": r["record"]["id"], "task": TASK_PROPOSE,
             "dish": dish_view(r["record"], r.get("nutrition")), "conditions": conditions,
             "condition_labels": [kb[c].label for c in conditions]}
            for r in recipes if r.get("kept")]


def condition_key(text: str) -> str:
    """A condition name as looked up in :func:`condition_names`: lower-case words."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def condition_names(kb: dict[str, ConditionKB]) -> dict[str, str]:
    """Normalised names -> condition id: the id, the label, each part of a label split at
    "/" and "(...)" ("Irritable Bowel Syndrome (IBS)" -> "irritable bowel syndrome", "ibs")."""
    names: dict[str, str] = {}
    for condition, entry in kb.items():
        parts = [condition, entry.label, *re.split(r"[/()]", entry.label)]
        for key in filter(None, map(condition_key, parts)):
            names.setdefault(key, condition)
    return names


def read_proposals(run_dir: Path) -> dict[str, dict[str, str] | None]:
    """recipe id -> {condition: recommend / not_recommend / neutral}, or None when the record
    is an error or its answer could not be parsed."""
    if not (run_dir / RECORDS_FILE).is_file():
        raise DataError(run_dir / RECORDS_FILE, "proposal run not found",
                        expected="run `nutrireason fam propose` first")
    proposals: dict[str, dict[str, str] | None] = {}
    for record in read_records(run_dir):
        usable = record.status == "ok" and record.parse_ok and isinstance(record.parsed, dict)
        proposals[record.item_id] = dict(record.parsed["sides"]) if usable else None
    return proposals


def disagreements(annotation: dict[str, Any], proposal: dict[str, str]) -> list[str]:
    """Conditions where the rules and the proposal take opposite Rec/NotRec sides."""
    found = []
    for key, side in SIDES.items():
        for entry in annotation["rec" if key == "Rec" else "not_rec"]:
            other = proposal.get(entry["condition"])
            if other in (REC, NOT_REC) and other != side:
                found.append(entry["condition"])
    return sorted(found)


def cross_check(annotations: list[dict[str, Any]],
                proposals: dict[str, dict[str, str] | None]) -> list[dict[str, Any]]:
    """The annotations with disagreeing or unproposed recipes dropped (``excluded`` says why)."""
    checked = []
    for annotation in annotations:
        if annotation["excluded"]:
            checked.append(annotation)
            continue
        proposal = proposals.get(annotation["recipe_id"])
        if proposal is None:
            checked.append(_drop(annotation, NO_PROPOSAL))
            continue
        conflicting = disagreements(annotation, proposal)
        checked.append(_drop(annotation, f"{DISAGREE}: {', '.join(conflicting)}")
                       if conflicting else annotation | {"proposal": proposal})
    return checked


def _drop(annotation: dict[str, Any], reason: str) -> dict[str, Any]:
    return annotation | {"excluded": reason, "rec": [], "not_rec": [],
                         "dropped": {"rec": annotation["rec"],
                                     "not_rec": annotation["not_rec"]}}


def write_items(items: list[dict[str, Any]], path: Path) -> Path:
    """The proposal items as a run-engine JSONL benchmark (atomically)."""
    return write_jsonl_atomic(path, items)
