"""The FAM-Bench annotation pool: annotate a resolved recipe corpus, write it with provenance and
a per-condition summary (``nutrireason fam annotate``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from nutrireason.fam.annotate import Thresholds, annotate, load_thresholds
from nutrireason.fam.kb import load_kb
from nutrireason.fam.proposals import cross_check
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.io import input_fingerprints, read_jsonl, write_json_atomic, write_jsonl_atomic
from nutrireason.sources.sr28 import Sr28


def food_table(sr28: Sr28) -> dict[str, dict[str, Any]]:
    """ndb_no -> description, group code and nutrients per 100 g."""
    nutrients = sr28.nutrients.set_index("ndb_no").to_dict(orient="index")
    return {row.ndb_no: {"description": row.description, "group_code": row.group_code,
                         "nutrients": nutrients.get(row.ndb_no, {})}
            for row in sr28.foods.itertuples(index=False)}


def read_recipes(path: Path) -> list[dict[str, Any]]:
    """The resolved recipes of a ``recipes build`` (``recipes.jsonl``)."""
    return read_jsonl(path, "resolved recipes", "run `nutrireason recipes build` first")


GENERATOR = "nutrireason.fam.pool/1"


def rule_files() -> list[Path]:
    """The standards files an annotation depends on (knowledge base, vocabulary, thresholds)."""
    from nutrireason.fam.kb import kb_dir
    from nutrireason.standards import standards_dir

    return [*sorted(kb_dir().glob("*.yaml")), standards_dir() / "fam_vocabulary.yaml",
            standards_dir() / "fam_rules.yaml"]


def build_pool(recipes: list[dict[str, Any]], sr28: Sr28, out: Path,
               thresholds: Thresholds | None = None,
               inputs: list[Path] | None = None,
               proposals: dict[str, dict[str, str] | None] | None = None) -> dict[str, Any]:
    """Annotate every recipe, cross-checked against LLM ``proposals`` when given (see
    :mod:`nutrireason.fam.proposals`); write ``annotations.jsonl``, ``summary.json`` and, when
    ``inputs`` are given, ``manifest.json`` with their fingerprints (written last)."""
    kb, vocabulary, foods = load_kb(), Vocabulary.load(), food_table(sr28)
    thresholds = thresholds or load_thresholds()
    annotations = [annotate(r, kb, vocabulary, foods, thresholds) for r in recipes]
    if proposals is not None:
        annotations = cross_check(annotations, proposals)
    summary = summarise(annotations, sorted(kb))
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)
    write_jsonl_atomic(out / "annotations.jsonl", annotations)
    write_json_atomic(out / "summary.json", summary)
    if inputs is not None:
        write_json_atomic(out / "manifest.json", {"generator": GENERATOR,
                                                  "inputs": input_fingerprints(inputs)})
    return summary


def summarise(annotations: list[dict[str, Any]], conditions: list[str]) -> dict[str, Any]:
    """Pool size, Rec and NotRec per condition; recipes excluded by reason."""
    rows = []
    for condition in conditions:
        rec = sum(any(e["condition"] == condition for e in a["rec"]) for a in annotations)
        not_rec = sum(any(e["condition"] == condition for e in a["not_rec"])
                      for a in annotations)
        dropped = sum(any(e["condition"] == condition for e in a.get("excluded_entries", []))
                      for a in annotations)
        rows.append({"condition": condition, "pool": rec + not_rec, "rec": rec,
                     "not_rec": not_rec, "excluded": dropped})
    excluded = Counter(a["excluded"].split(":")[0] for a in annotations if a["excluded"])
    entries = Counter(e["reason"] for a in annotations for e in a.get("excluded_entries", []))
    annotated = [a for a in annotations if not a["excluded"]]
    return {"recipes": len(annotations), "annotated": len(annotated),
            "with_any_entry": sum(bool(a["rec"] or a["not_rec"]) for a in annotated),
            "conditions": rows, "excluded_by_reason": dict(sorted(excluded.items())),
            "entries_excluded_by_reason": dict(sorted(entries.items()))}
