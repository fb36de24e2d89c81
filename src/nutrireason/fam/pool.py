"""The FAM-Bench annotation pool: annotate a resolved recipe corpus, write it with provenance and
a per-condition summary (``nutrireason fam annotate``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nutrireason.errors import NutriReasonError
from nutrireason.fam.annotate import Thresholds, annotate, load_thresholds
from nutrireason.fam.kb import load_kb
from nutrireason.fam.proposals import (
    MODE_CROSS_CHECK,
    MODE_RULES,
    PassRunner,
    Proposer,
    annotation_loop,
    cross_check,
    loop_counts,
    run_models,
)
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.sources.sr28 import Sr28
from nutrireason.storage import (
    input_fingerprints,
    read_jsonl,
    scrub,
    write_json_atomic,
    write_jsonl_atomic,
)


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
    from nutrireason.fam.kb import kb_files
    from nutrireason.standards import standards_dir

    return [*sorted(kb_files()), standards_dir() / "fam_vocabulary.yaml",
            standards_dir() / "fam_food_lists.yaml", standards_dir() / "fam_rules.yaml"]


def build_pool(recipes: list[dict[str, Any]], sr28: Sr28, out: Path,
               thresholds: Thresholds | None = None,
               inputs: list[Path] | None = None,
               proposals: Mapping[str, Mapping[str, Any] | None] | None = None,
               proposer: Proposer | None = None, proposals_from: str | None = None,
               log: Callable[[str], Any] = lambda _: None,
               run_pass: PassRunner | None = None) -> dict[str, Any]:
    """Annotate every recipe with the rules, then (see :mod:`nutrireason.fam.proposals`) run
    the propose-check-correct loop with ``proposer``, its passes run by ``run_pass`` (the run
    engine's: :func:`nutrireason.pipeline.annotation_loop.build_pool`), or cross-check a finished
    run's ``proposals`` (``proposals_from`` names it), or neither (rules alone label); write
    ``annotations.jsonl``, ``summary.json`` and, when ``inputs`` are given, ``manifest.json``
    with their fingerprints and the ``annotation`` mode (written last). Returns the summary,
    with ``annotation`` and, for the loop, this invocation's ``model_calls``/``cache_hits``."""
    if proposer is not None and run_pass is None:
        raise NutriReasonError(
            "the annotation loop asks a model through the run engine: call "
            "nutrireason.pipeline.annotation_loop.build_pool, or pass run_pass")
    kb, vocabulary, foods = load_kb(), Vocabulary.load(), food_table(sr28)
    thresholds = thresholds or load_thresholds()
    annotations = [annotate(r, kb, vocabulary, foods, thresholds) for r in recipes]
    calls: dict[str, int] = {}
    if proposer is not None and run_pass is not None:
        annotations, section, calls = annotation_loop(recipes, annotations, kb, proposer,
                                                      run_pass, log)
    elif proposals is not None:
        annotations = cross_check(annotations, proposals)
        models = run_models(Path(proposals_from)) if proposals_from else []
        section = {"mode": MODE_CROSS_CHECK, "proposals": proposals_from,
                   "proposer": ", ".join(map(scrub, models)) or None,
                   **loop_counts(annotations)}
    else:
        section = {"mode": MODE_RULES}
    summary = summarise(annotations, sorted(kb)) | {"annotation": section}
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)
    write_jsonl_atomic(out / "annotations.jsonl", annotations)
    write_json_atomic(out / "summary.json", summary)
    if inputs is not None:
        write_json_atomic(out / "manifest.json", {"generator": GENERATOR,
                                                  "inputs": input_fingerprints(inputs),
                                                  "annotation": section})
    return summary | calls


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
