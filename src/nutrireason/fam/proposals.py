"""The LLM side of FAM-Bench annotation (paper section 3.3 "Validation", Appendix E).

The annotation loop (``nutrireason fam annotate --proposer MODEL``), in three engine-backed
steps:

1. **propose**: the model proposes, for each kept recipe and each condition, Rec / NotRec /
   neutral and the ingredients E_h behind each Rec / NotRec decision (task ``fam_propose``,
   item id = recipe id);
2. **check**: the three rule families (the rule-based annotation of
   :func:`nutrireason.fam.annotate.annotate`) check each proposal: a condition the proposal
   puts on the side opposite the rules' is a *conflict*, recorded with the rule provenance that
   contradicts it (which rule fired on which ingredient or nutrient value);
3. **correct**: a recipe with conflicts is asked once more, with those conflicts surfaced in the
   prompt (task ``fam_correct``, item id ``<recipe id>#correct``, a second engine pass);
   conflicts that persist drop the recipe from the pool.

Each pass is a run-engine run (cache, retries, resume, one record per sample) in its own
directory ``<pool>/loop/<pass>-<digest>``, the digest covering the items, the model and the
settings: re-running the same command resumes (no new model calls for finished samples); new
inputs get a fresh run whose unchanged prompts still come from the response cache. This module
holds the loop's logic only; the engine pass is injected (:class:`PassRunner`), and
:mod:`nutrireason.pipeline.annotation_loop` wires in the run engine's.

Gold stays rule-grounded: a recipe the loop keeps keeps its rule entries, with the (final)
proposal beside them under ``proposal``. Every recipe the loop saw carries ``loop`` (outcome,
proposals, conflicts); a dropped one has ``excluded`` (the reason) and its rule entries under
``dropped``. A condition one side calls neutral is never a conflict.

``nutrireason fam propose`` + ``fam annotate --proposals RUN`` is the same check on a finished
proposal run without the corrective pass (mode "cross-check").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nutrireason.errors import DataError
from nutrireason.fam.instances import dish_view
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import ConditionKB
from nutrireason.schema import RECORDS_FILE, Record, read_records
from nutrireason.storage import scrub, write_jsonl_atomic

TASK_PROPOSE = "fam_propose"
TASK_CORRECT = "fam_correct"
CORRECT_SUFFIX = "#correct"
METHOD = "fam-propose"  # answers both tasks
SIDES = {"Rec": REC, "NotRec": NOT_REC}
NEUTRAL = "neutral"

MODE_RULES = "rules-only"
MODE_LOOP = "propose-check-correct"
MODE_CROSS_CHECK = "cross-check"

# ``excluded`` reasons (the pool summary counts them by the text before the first colon)
NO_PROPOSAL = "no usable LLM proposal"
NOT_PROPOSED = "not proposed (outside --limit)"
DISAGREE = "rule/LLM disagreement"
DISAGREE_AFTER = "rule/LLM disagreement after correction"
NO_CORRECTION = "no usable LLM correction"

# ``loop["outcome"]`` values
AGREED, CORRECTED = "agreed", "corrected"
DISAGREED, FAILED, CORRECTION_FAILED, UNPROPOSED = (
    "disagreed", "no_proposal", "no_correction", "not_proposed")
RESPONSE_KEEP = 1000  # characters of an unusable answer kept in ``loop`` for the audit


# --------------------------------------------------------------------------- items and names

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


def write_items(items: list[dict[str, Any]], path: Path) -> Path:
    """The proposal items as a run-engine JSONL benchmark (atomically)."""
    return write_jsonl_atomic(path, items)


# --------------------------------------------------------------------------- outcomes

def outcome_of(record: Record) -> dict[str, Any]:
    """One engine record as a proposal outcome: ``status`` "ok" (with ``proposal``: {"sides",
    "ingredients"}), "error" (with the error) or "unparsed"; ``response`` is the raw answer."""
    response = record.responses[-1] if record.responses else ""
    if record.status != "ok":
        return {"status": "error", "proposal": None, "error": record.error,
                "response": response}
    parsed = record.parsed if isinstance(record.parsed, dict) else {}
    if not (record.parse_ok and parsed.get("sides")):
        return {"status": "unparsed", "proposal": None, "response": response}
    return {"status": "ok", "proposal": {"sides": dict(parsed["sides"]),
                                         "ingredients": dict(parsed.get("ingredients") or {})},
            "response": response}


def as_outcome(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """An outcome from what callers hold: an outcome, a proposal ({"sides", ...}), a bare
    {condition: side} mapping, or None (no usable proposal)."""
    if value is None:
        return {"status": "unparsed", "proposal": None, "response": ""}
    if "status" in value:
        return dict(value)
    if "sides" in value:
        return {"status": "ok", "proposal": {"sides": dict(value["sides"]),
                                             "ingredients": dict(value.get("ingredients") or {})},
                "response": ""}
    return {"status": "ok", "proposal": {"sides": dict(value), "ingredients": {}}, "response": ""}


def read_proposals(run_dir: Path) -> dict[str, dict[str, Any]]:
    """recipe id -> proposal outcome (see :func:`outcome_of`) for a ``fam propose`` run."""
    if not (run_dir / RECORDS_FILE).is_file():
        raise DataError(run_dir / RECORDS_FILE, "proposal run not found",
                        expected="run `nutrireason fam propose` first")
    return {r.item_id: outcome_of(r) for r in read_records(run_dir)
            if not r.item_id.endswith(CORRECT_SUFFIX)}


def run_models(run_dir: Path) -> list[str]:
    """The provider strings a proposal run's records were answered by."""
    return sorted({r.model for r in read_records(run_dir)})


# --------------------------------------------------------------------------- the check

def rule_entries(annotation: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """condition -> (rule side, rule entry) for the annotation's Rec and NotRec entries."""
    found = {}
    for key, side in (("rec", REC), ("not_rec", NOT_REC)):
        for entry in annotation.get(key) or []:
            found[entry["condition"]] = (side, entry)
    return found


def conflicts(annotation: dict[str, Any], proposal: dict[str, Any]) -> list[dict[str, Any]]:
    """Each condition the proposal puts on the side opposite the rules', with the rule
    provenance that contradicts it (sorted by condition)."""
    sides = proposal.get("sides") or {}
    cited = proposal.get("ingredients") or {}
    found = []
    for condition, (rule_side, entry) in sorted(rule_entries(annotation).items()):
        proposed = sides.get(condition)
        if proposed not in (REC, NOT_REC) or proposed == rule_side:
            continue
        provenance = [p for p in entry.get("provenance") or [] if not p.get("overruled")]
        found.append({"condition": condition, "proposed": proposed, "rules": rule_side,
                      "proposed_ingredients": list(cited.get(condition) or []),
                      "rule_ingredients": list(entry.get("ingredients") or []),
                      "rule_provenance": provenance,
                      "findings": [finding_text(p) for p in provenance]})
    return found


def disagreements(annotation: dict[str, Any], proposal: Mapping[str, Any]) -> list[str]:
    """Conditions where the rules and the proposal (or a bare {condition: side}) take opposite
    Rec/NotRec sides."""
    return [c["condition"] for c in conflicts(annotation, as_outcome(proposal)["proposal"])]


def _number(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return str(value)
    if abs(number) >= 100 or number == int(number):
        return f"{number:,.0f}"
    return f"{number:,.3g}"


def _words(name: Any) -> str:
    return str(name).replace("_", " ")


def finding_text(fired: dict[str, Any]) -> str:
    """One fired rule in words, e.g. "sodium 1,200 mg per serving above 600 mg
    (nutrient_veto; main sources: salt)"."""
    rule = str(fired.get("rule", "rule"))
    if rule == "ingredient_concept":
        share = fired.get("mass_share")
        amount = f", {float(share):.0%} of the recipe by weight" if (
            isinstance(share, int | float) and fired.get("kb_side") != "avoid") else ""
        return (f"{fired.get('ingredient')} ({_words(fired.get('concept'))}) is on the "
                f"knowledge base's {fired.get('kb_side')} list for this condition{amount} "
                f"({rule})")
    if rule == "nutrient_veto":
        value, unit = fired.get("value"), fired.get("unit") or ""
        high, low = fired.get("max"), fired.get("min")
        over = high is not None and value is not None and float(value) > float(high)
        bound = f"{'above' if over or low is None else 'below'} " \
                f"{_number(high if over or low is None else low)} {unit}".rstrip()
        basis = fired.get("basis") or (f"per {fired['per']}" if fired.get("per") else "")
        sources = fired.get("ingredients") or []
        main = f"; main sources: {', '.join(map(str, sources))}" if sources else ""
        return (f"{_words(fired.get('nutrient'))} {_number(value)} {unit} {basis} {bound} "
                f"({rule}{main})").replace("  ", " ")
    if rule == "ingredient_fallback":
        names = ", ".join(map(str, fired.get("ingredients") or [])) or "no listed ingredient"
        return (f"the recipe contains {names}, canonical instances of this condition's rule "
                f"set ({rule})")
    details = ", ".join(f"{k}={v}" for k, v in sorted(fired.items())
                        if k not in ("rule", "source") and v not in (None, "", []))
    return f"{rule}: {details}" if details else rule


# --------------------------------------------------------------------------- the decision

def _drop(annotation: dict[str, Any], reason: str, loop: dict[str, Any]) -> dict[str, Any]:
    """Out of the pool: the rules' entries move under ``dropped``, the loop's record beside."""
    entries = {key: annotation.get(key) or [] for key in ("rec", "not_rec", "excluded_entries")}
    return annotation | {"excluded": reason, "rec": [], "not_rec": [], "excluded_entries": [],
                         "dropped": entries, "loop": loop}


def _failure(outcome: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(reason detail, audit fields) for an unusable answer."""
    if outcome["status"] == "error":
        error = outcome.get("error") or {}
        return f"model error ({error.get('kind', 'unknown')})", {
            "status": "error", "error": error}
    return "unparseable answer", {"status": outcome["status"],
                                  "response": (outcome.get("response") or "")[:RESPONSE_KEEP]}


def merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The corrected proposal: the second answer's conditions (side and cited ingredients)
    over the first's; a condition the second answer leaves out keeps its first answer."""
    sides = first["sides"] | second["sides"]
    cited = {}
    for condition, side in sides.items():
        source = second if condition in second["sides"] else first
        if side in (REC, NOT_REC):
            cited[condition] = list((source.get("ingredients") or {}).get(condition) or [])
    return {"sides": sides, "ingredients": cited}


def resolve(annotation: dict[str, Any], first: Mapping[str, Any] | None,
            second: Mapping[str, Any] | None = None, correct: bool = True,
            proposed: bool = True) -> dict[str, Any]:
    """One recipe's place in the pool after the check (and, when ``correct``, the corrective
    pass whose outcome is ``second``). Rule-excluded recipes are returned unchanged."""
    if annotation["excluded"]:
        return annotation
    if not proposed:
        return _drop(annotation, NOT_PROPOSED, {"outcome": UNPROPOSED})
    outcome = as_outcome(first)
    if outcome["proposal"] is None:
        detail, audit = _failure(outcome)
        return _drop(annotation, f"{NO_PROPOSAL}: {detail}", {"outcome": FAILED, **audit})
    proposal = outcome["proposal"]
    found = conflicts(annotation, proposal)
    if not found:
        return annotation | {"proposal": proposal, "loop": {"outcome": AGREED, "conflicts": []}}
    names = ", ".join(c["condition"] for c in found)
    loop: dict[str, Any] = {"outcome": DISAGREED, "proposal": proposal, "conflicts": found}
    if not correct:
        return _drop(annotation, f"{DISAGREE}: {names}", loop)
    fixed = as_outcome(second) if second is not None else {"status": "missing",
                                                             "proposal": None}
    if fixed["proposal"] is None:
        detail, audit = _failure(fixed) if second is not None else ("not asked", {})
        loop |= {"outcome": CORRECTION_FAILED, "correction": audit}
        return _drop(annotation, f"{NO_CORRECTION}: {detail}; conflicts: {names}", loop)
    final = merge(proposal, fixed["proposal"])
    after = conflicts(annotation, final)
    loop |= {"correction": fixed["proposal"], "conflicts_after": after}
    if after:
        return _drop(annotation, f"{DISAGREE_AFTER}: "
                     f"{', '.join(c['condition'] for c in after)}", loop)
    return annotation | {"proposal": final, "loop": loop | {"outcome": CORRECTED}}


def cross_check(annotations: list[dict[str, Any]],
                proposals: Mapping[str, Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """The check alone, on a finished proposal run (no corrective pass): disagreeing recipes
    and recipes without a usable proposal are dropped (``excluded`` says why)."""
    return [resolve(a, proposals.get(a["recipe_id"]), correct=False,
                    proposed=a["recipe_id"] in proposals) for a in annotations]


def loop_counts(annotations: list[dict[str, Any]]) -> dict[str, Any]:
    """What the loop did, from the annotations' ``loop`` records: recipes per outcome and
    (recipe, condition) conflicts per condition, first and after correction."""
    outcomes = Counter(a["loop"]["outcome"] for a in annotations if a.get("loop"))
    first: Counter[str] = Counter()
    persisting: Counter[str] = Counter()
    for a in annotations:
        loop = a.get("loop") or {}
        first.update(c["condition"] for c in loop.get("conflicts", []))
        if loop.get("outcome") in (DISAGREED, CORRECTION_FAILED):
            persisting.update(c["condition"] for c in loop.get("conflicts_after",
                                                               loop.get("conflicts", [])))
    failed = [a["loop"] for a in annotations if a.get("loop", {}).get("outcome") == FAILED]
    proposed = sum(outcomes[o] for o in (AGREED, CORRECTED, DISAGREED, FAILED,
                                         CORRECTION_FAILED))
    return {
        "rules_excluded": sum(1 for a in annotations if a["excluded"] and not a.get("loop")),
        "proposed": proposed, "not_proposed": outcomes[UNPROPOSED],
        "proposal_errors": sum(1 for f in failed if f.get("status") == "error"),
        "proposal_unparsed": sum(1 for f in failed if f.get("status") != "error"),
        "agreed_first": outcomes[AGREED],
        "conflicted_first": outcomes[CORRECTED] + outcomes[DISAGREED]
        + outcomes[CORRECTION_FAILED],
        "corrected": outcomes[CORRECTED],
        "correction_failed": outcomes[CORRECTION_FAILED],
        "dropped_disagreement": outcomes[DISAGREED],
        "dropped": outcomes[FAILED] + outcomes[DISAGREED] + outcomes[CORRECTION_FAILED],
        "kept": outcomes[AGREED] + outcomes[CORRECTED],
        "conflicts_by_condition": {c: {"first": first[c], "persisting": persisting[c]}
                                   for c in sorted(first)},
    }


# --------------------------------------------------------------------------- the loop

@dataclass
class Proposer:
    """The model and engine settings of the annotation loop."""

    model: str
    work_dir: Path  # the pass run directories go here (``<pool>/loop``)
    concurrency: int = 8
    limit: int | None = None
    max_tokens: int = 1024
    retry_errors: bool = False
    progress: bool = True

    def settings(self) -> dict[str, Any]:
        """What decides the pool besides the inputs (recorded in the pool manifest)."""
        return {"proposer": scrub(self.model), "limit": self.limit,
                "max_tokens": self.max_tokens, "temperature": 0.0}


class LoopInterrupted(Exception):
    """An engine pass was interrupted; finished samples are kept, the pool is not written."""


def correction_item(item: dict[str, Any], outcome: dict[str, Any],
                    found: list[dict[str, Any]], kb: dict[str, ConditionKB]) -> dict[str, Any]:
    """The second-pass item: the first item, the model's first answer and its conflicts as
    the prompt states them (condition labels, sides, the rule findings)."""
    return {"id": f"{item['id']}{CORRECT_SUFFIX}", "task": TASK_CORRECT,
            "recipe_id": item["id"], "dish": item["dish"], "conditions": item["conditions"],
            "condition_labels": item["condition_labels"], "previous": outcome["response"],
            "conflicts": [{"condition": kb[c["condition"]].label, "proposed": c["proposed"],
                           "rules": c["rules"], "findings": c["findings"]} for c in found]}


@dataclass(frozen=True)
class PassResult:
    """One finished engine pass: its run directory, the outcome per item id, and what it cost
    this invocation (model calls, cache hits)."""

    run_dir: Path
    outcomes: dict[str, dict[str, Any]]
    model_calls: int = 0
    cache_hits: int = 0


class PassRunner(Protocol):
    """Runs (or resumes) one pass of the loop over ``items`` (the first ``limit`` of them when
    given) and returns its outcomes; raises :class:`LoopInterrupted` when interrupted. The run
    engine's is :func:`nutrireason.pipeline.annotation_loop.engine_pass`: fam never runs the engine
    itself."""

    def __call__(self, name: str, items: list[dict[str, Any]], proposer: Proposer,
                 limit: int | None = None) -> PassResult: ...


def annotation_loop(recipes: list[dict[str, Any]], annotations: list[dict[str, Any]],
                    kb: dict[str, ConditionKB], proposer: Proposer, run_pass: PassRunner,
                    log: Callable[[str], Any] = lambda _: None
                    ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, int]]:
    """Propose, check, correct once, drop what persists: (annotations, the manifest's
    ``annotation`` section, this invocation's model calls and cache hits). Only candidate
    annotations are proposed for: recipes the rules exclude are never sent to the model.
    ``run_pass`` asks the model (see :class:`PassRunner`)."""
    candidates = {a["recipe_id"] for a in annotations if not a["excluded"]}
    items = [i for i in proposal_items(recipes, kb) if i["id"] in candidates]
    selected = items if proposer.limit is None else items[:proposer.limit]
    log(f"propose: {len(selected):,} recipes x {len(kb)} conditions with {proposer.model}")
    runs: dict[str, str] = {}
    calls = {"model_calls": 0, "cache_hits": 0}
    first: dict[str, dict[str, Any]] = {}
    if items:
        done = run_pass("propose", items, proposer, proposer.limit)
        first = done.outcomes
        runs["propose"] = done.run_dir.relative_to(proposer.work_dir.parent).as_posix()
        calls = {"model_calls": done.model_calls, "cache_hits": done.cache_hits}
    by_id = {a["recipe_id"]: a for a in annotations}
    to_correct = []
    for item in selected:
        outcome = first.get(str(item["id"]))
        annotation = by_id.get(item["id"])
        if outcome is None or outcome["proposal"] is None or annotation is None:
            continue
        found = conflicts(annotation, outcome["proposal"])
        if found:
            to_correct.append(correction_item(item, outcome, found, kb))
    second: dict[str, dict[str, Any]] = {}
    if to_correct:
        log(f"correct: {len(to_correct):,} recipes with conflicts, asked once more")
        done = run_pass("correct", to_correct, proposer)
        second = {rid.removesuffix(CORRECT_SUFFIX): o for rid, o in done.outcomes.items()}
        runs["correct"] = done.run_dir.relative_to(proposer.work_dir.parent).as_posix()
        calls = {"model_calls": calls["model_calls"] + done.model_calls,
                 "cache_hits": calls["cache_hits"] + done.cache_hits}
    proposed = {str(i["id"]) for i in selected}
    final = [resolve(a, first.get(a["recipe_id"]), second.get(a["recipe_id"]),
                     proposed=a["recipe_id"] in proposed) for a in annotations]
    section = {"mode": MODE_LOOP, **proposer.settings(), "runs": runs, **loop_counts(final)}
    return final, section, calls
