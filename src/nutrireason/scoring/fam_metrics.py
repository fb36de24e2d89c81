"""FAM-Bench metrics: dish-level suitability (``fam_dish``) and 4-dish ranking (``fam_rank``).

Both follow the design of :mod:`nutrireason.scoring.metrics`: per-sample sufficient statistics
in a :class:`~nutrireason.scoring.metrics.Table`, so ``with_ci`` bootstraps them.

``fam_dish`` (gold: decision, condition, rationale, ingredients; parsed: decision, ingredients):

* An answer is unparseable when ``parse_ok`` is False or its decision is not "recommend" /
  "not_recommend" (None included). It is wrong, is not a "recommend", and cites nothing.
* Rationale matching maps each cited name to a canonical ingredient of the item's own
  ingredient list (:func:`canonical_citations`); the gold set is ``gold["rationale"]``
  normalised the same way. The strict variant compares lower-cased, stripped strings as-is.
* Micro P/R/F1 pool tp/fp/fn over samples; macro F1 is the unweighted mean of per-condition F1
  (each from that condition's pooled counts) over the conditions present in the (re)sample.

``fam_rank`` (gold: ranking; parsed: ranking, option_decisions):

* A returned ranking keeps the distinct valid letters in order; it is completed by appending
  the missing letters alphabetically (:func:`complete_ranking`).
* Unparseable (``parse_ok`` False or no valid letter): top-1 0, reciprocal rank 0, Kendall
  tau 0 (no information), counted in ``unparseable_rate``.
* ``kendall_tau`` is tau-a between the completed ranking and gold (no ties).
* ``ctc`` (cross-task consistency): over records with a parsed ranking and a decision
  ("recommend" / "not_recommend") for every option, the share of (recommended, not
  recommended) pairs the completed ranking puts in that order, micro-averaged. It is 0 when
  there are no pairs; ``ctc_pairs`` (a total, not a mean) tells readers when that happens.
  ``ctc_coverage`` is the share of scored records with usable decisions (a record whose
  decisions are all the same is covered but adds no pair).

Table 1's common pool (:func:`common_pool`, paper Table 1 caption): per model and task, the item
ids that every text-input prompting mode (:func:`pooled_method`) answered validly
(:func:`valid_answer`); each mode is then scored on those items only (:func:`pool_table`), so
CTC there is the pool's agreeing pairs over its pairs. ``score`` writes these under
``metrics.json``'s ``pools`` key; its groups keep the full-run values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from nutrireason.schema import answer_kind
from nutrireason.scoring.metrics import Table, safe_div

DECISIONS = ("recommend", "not_recommend")
DISH_METRICS = (
    "accuracy", "recommend_rate", "unparseable_rate", "rationale_micro_precision",
    "rationale_micro_recall", "rationale_micro_f1", "rationale_macro_f1",
    "rationale_micro_f1_strict", "rationale_macro_f1_strict",
)
RANK_METRICS = ("top1_accuracy", "mrr", "kendall_tau", "unparseable_rate", "ctc", "ctc_pairs",
                "ctc_coverage")
_DISH_BASE = 9  # correct, recommend, bad, tp, fp, fn, tp_strict, fp_strict, fn_strict
_PER_CONDITION = 7  # count, tp, fp, fn, tp_strict, fp_strict, fn_strict
_APOSTROPHE = re.compile(r"['\u2019]")
_NON_WORD = re.compile(r"[\W_]+")

# --------------------------------------------------------------------------- names


def _singular(word: str) -> str:
    """Crude singular: "tomatoes" -> "tomato", "beans" -> "bean"; "peas" -> "pea";
    words of 3 letters or fewer and words ending in "ss" are kept."""
    if len(word) > 4 and word.endswith("oes"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def normalise_name(name: Any) -> str:
    """Lower-case, drop punctuation, collapse spaces and singularise each word."""
    text = _NON_WORD.sub(" ", _APOSTROPHE.sub("", str(name or "").lower()))
    return " ".join(_singular(w) for w in text.split())


def _tokens(name: Any) -> set[str]:
    return set(normalise_name(name).split())


def _jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _contains(cited: set[str], ingredient: dict) -> bool:
    """The ingredient's food or line tokens hold every cited token, or its (non-empty)
    canonical tokens are all among the cited tokens."""
    canonical = _tokens(ingredient.get("canonical"))
    return (cited <= _tokens(ingredient.get("food")) or cited <= _tokens(ingredient.get("line"))
            or (bool(canonical) and canonical <= cited))


def _canonical_of(name: str, ingredients: Sequence[dict]) -> str:
    """The normalised canonical name a (normalised, non-empty) cited name refers to."""
    for field in ("canonical", "food"):
        for item in ingredients:
            if normalise_name(item.get(field)) == name:
                return normalise_name(item.get("canonical"))
    cited = set(name.split())
    best, best_score = None, -1.0
    for item in ingredients:
        score = _jaccard(cited, _tokens(item.get("food")))
        if _contains(cited, item) and score > best_score:
            best, best_score = item, score
    return name if best is None else normalise_name(best.get("canonical"))


def canonical_citations(cited: Sequence[str], ingredients: Sequence[dict]) -> list[str]:
    """The distinct canonical names (normalised, first-cited order) the cited names refer to.

    Each cited name is normalised (:func:`normalise_name`) and mapped using the item's own
    ingredient list (dicts with ``line``, ``food`` and ``canonical``): (1) equal to a
    normalised canonical name -> that name; (2) equal to a normalised food phrase -> that
    ingredient's canonical; (3) the ingredient whose food or line tokens contain every cited
    token, or whose canonical tokens are all cited, with the largest token Jaccard between the
    cited name and its food phrase (ties: first listed) -> its canonical; (4) otherwise the
    normalised cited name itself. Empty names and empty (unknown) canonicals are left out.
    """
    out: dict[str, None] = {}
    for raw in cited:
        name = normalise_name(raw)
        canonical = _canonical_of(name, ingredients) if name else ""
        if canonical:
            out[canonical] = None
    return list(out)


def _counts(pred: set[str], gold: set[str]) -> tuple[int, int, int]:
    """(tp, fp, fn) of a predicted set against a gold set."""
    tp = len(pred & gold)
    return tp, len(pred) - tp, len(gold) - tp


def _strict(names: Iterable[Any]) -> set[str]:
    return {str(n).strip().lower() for n in names if str(n).strip()}


# --------------------------------------------------------------------------- fam_dish


def _decision(parsed: Any, ok: bool) -> str | None:
    """The parsed decision, or None when the answer is unparseable."""
    if not ok or not isinstance(parsed, dict):
        return None
    value = str(parsed.get("decision") or "").strip().lower()
    return value if value in DECISIONS else None


def _cited(parsed: Any) -> list[str]:
    names = parsed.get("ingredients") if isinstance(parsed, dict) else None
    return [str(n) for n in names or [] if n is not None]


def dish_row(parsed: Any, gold: dict, ok: bool) -> list[float]:
    """One sample's statistics: correct, recommend, unparseable, then tp/fp/fn of the
    canonical rationale match and tp/fp/fn of the strict one."""
    decision = _decision(parsed, ok)
    bad = decision is None
    cited = [] if bad else _cited(parsed)
    rationale = [str(r) for r in gold.get("rationale") or []]
    gold_set = {n for n in map(normalise_name, rationale) if n}
    pred_set = set(canonical_citations(cited, gold.get("ingredients") or []))
    canonical = _counts(pred_set, gold_set)
    strict = _counts(_strict(cited), _strict(rationale))
    correct = not bad and decision == gold.get("decision")
    return [float(correct), float(decision == "recommend"), float(bad), *canonical, *strict]


def _condition(gold: dict) -> str:
    return str(gold.get("condition") or "")


def _f1(counts: np.ndarray) -> np.ndarray:
    """F1 from tp, fp, fn in the last axis (0 when all are 0)."""
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    return safe_div(2 * tp, 2 * tp + fp + fn)


def _macro_f1(counts: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Mean per-condition F1 over the present conditions: counts (B, C, 3), present (B, C)."""
    return safe_div((_f1(counts) * present).sum(axis=1), present.sum(axis=1))


def dish_table(pred: Sequence[Any], gold: Sequence[dict], parse_ok: Sequence[bool]) -> Table:
    """The ``fam_dish`` metrics (:data:`DISH_METRICS`) as a bootstrappable table."""
    base = np.array([dish_row(p, g, ok) for p, g, ok in zip(pred, gold, parse_ok, strict=True)],
                    dtype=float).reshape(-1, _DISH_BASE)
    conditions = sorted({_condition(g) for g in gold})
    blocks = np.zeros((len(base), len(conditions), _PER_CONDITION))
    for i, g in enumerate(gold):
        blocks[i, conditions.index(_condition(g))] = [1.0, *base[i, 3:]]
    stats = np.hstack([base, blocks.reshape(len(base), len(conditions) * _PER_CONDITION)])

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        tp, fp, fn = sums[:, 3], sums[:, 4], sums[:, 5]
        per = sums[:, _DISH_BASE:].reshape(len(sums), len(conditions), _PER_CONDITION)
        present = per[:, :, 0] > 0
        return {"accuracy": safe_div(sums[:, 0], n), "recommend_rate": safe_div(sums[:, 1], n),
                "unparseable_rate": safe_div(sums[:, 2], n),
                "rationale_micro_precision": safe_div(tp, tp + fp),
                "rationale_micro_recall": safe_div(tp, tp + fn),
                "rationale_micro_f1": _f1(sums[:, 3:6]),
                "rationale_macro_f1": _macro_f1(per[:, :, 1:4], present),
                "rationale_micro_f1_strict": _f1(sums[:, 6:9]),
                "rationale_macro_f1_strict": _macro_f1(per[:, :, 4:7], present)}

    return Table(stats, finish, {"accuracy": 0, "recommend_rate": 1, "unparseable_rate": 2})


# --------------------------------------------------------------------------- fam_rank


def returned_ranking(ranking: Iterable[Any] | None, letters: Iterable[str] = "ABCD"
                     ) -> list[str]:
    """The distinct valid letters of a returned ranking, in order (upper-cased)."""
    valid = set(letters)
    out: dict[str, None] = {}
    for value in ranking or []:
        letter = str(value).strip().upper()
        if letter in valid:
            out[letter] = None
    return list(out)


def complete_ranking(ranking: Iterable[Any] | None, letters: Iterable[str] = "ABCD"
                     ) -> list[str]:
    """The returned ranking (distinct valid letters) with the missing letters appended in
    alphabetical order, e.g. ``["C", "A"]`` -> ``["C", "A", "B", "D"]``."""
    kept = returned_ranking(ranking, letters)
    return kept + sorted(set(letters) - set(kept))


def kendall_tau(ranking: Iterable[Any] | None, gold: Sequence[str]) -> float:
    """Kendall tau-a between the completed ranking and ``gold`` over gold's letters:
    (concordant - discordant) / number of pairs; 0 with fewer than two letters."""
    position = {letter: i for i, letter in enumerate(complete_ranking(ranking, sorted(gold)))}
    pairs = list(combinations(gold, 2))  # (a, b) with a above b in gold
    if not pairs:
        return 0.0
    score = sum(1 if position[a] < position[b] else -1 for a, b in pairs)
    return score / len(pairs)


def ctc_pairs(ranking: Iterable[Any] | None, decisions: dict[str, Any]) -> tuple[int, int]:
    """(agree, pairs): pairs are every (i, j) with decisions[i] == "recommend" and
    decisions[j] == "not_recommend"; a pair agrees when the ranking, completed over the decided
    options, puts i above j. Other decision values take part in no pair."""
    position = {letter: k for k, letter in enumerate(complete_ranking(ranking, sorted(decisions)))}
    liked = [k for k, v in decisions.items() if v == "recommend"]
    disliked = [k for k, v in decisions.items() if v == "not_recommend"]
    agree = sum(position[i] < position[j] for i in liked for j in disliked)
    return agree, len(liked) * len(disliked)


def _usable_decisions(parsed: dict, letters: Sequence[str]) -> dict[str, str] | None:
    """The model's own decisions when every option has one, else None."""
    decisions = parsed.get("option_decisions")
    if not isinstance(decisions, dict):
        return None
    picked = {k: decisions.get(k) for k in letters}
    return picked if all(v in DECISIONS for v in picked.values()) else None


def rank_row(parsed: Any, gold: dict, ok: bool) -> list[float]:
    """One sample's statistics: top-1, reciprocal rank, Kendall tau, unparseable, then CTC
    agree, pairs and covered."""
    order = [str(x) for x in gold.get("ranking") or []]
    letters = sorted(order)
    returned = returned_ranking(parsed.get("ranking"), letters) \
        if ok and isinstance(parsed, dict) else []
    if not returned or not order:
        return [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    top = order[0]
    reciprocal = 1 / (returned.index(top) + 1) if top in returned else 0.0
    decisions = _usable_decisions(parsed, letters)
    agree, pairs = ctc_pairs(returned, decisions) if decisions else (0, 0)
    return [float(returned[0] == top), reciprocal, kendall_tau(returned, order), 0.0,
            float(agree), float(pairs), float(decisions is not None)]


def rank_table(pred: Sequence[Any], gold: Sequence[dict], parse_ok: Sequence[bool]) -> Table:
    """The ``fam_rank`` metrics (:data:`RANK_METRICS`) as a bootstrappable table."""
    stats = np.array([rank_row(p, g, ok) for p, g, ok in zip(pred, gold, parse_ok, strict=True)],
                     dtype=float).reshape(-1, 7)

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        return {"top1_accuracy": safe_div(sums[:, 0], n), "mrr": safe_div(sums[:, 1], n),
                "kendall_tau": safe_div(sums[:, 2], n), "unparseable_rate": safe_div(sums[:, 3], n),
                "ctc": safe_div(sums[:, 4], sums[:, 5]), "ctc_pairs": sums[:, 5].copy(),
                "ctc_coverage": safe_div(sums[:, 6], n)}

    return Table(stats, finish, {"top1_accuracy": 0, "mrr": 1, "kendall_tau": 2,
                                 "unparseable_rate": 3, "ctc_coverage": 6})


def rank_metrics(pred: Sequence[Any], gold: Sequence[dict],
                 parse_ok: Sequence[bool]) -> dict[str, float]:
    """Point values of :func:`rank_table`."""
    return rank_table(pred, gold, parse_ok).point()


# --------------------------------------------------------------------------- Table 1's pool

Answer = tuple[Any, Any, bool]  # (parsed, gold, ok): ok = status "ok" and parse_ok


def _shape(task: str) -> str:
    """The answer shape of a task (a shape's own name is taken as it is)."""
    return answer_kind(task) or task


def valid_answer(task: str, parsed: Any, gold: Any, ok: bool) -> bool:
    """Whether an answer may enter the common pool: a dish decision needs a decision; a
    ranking needs a valid letter and a decision for every option. ``task``: a task of either
    shape, or the shape itself."""
    shape = _shape(task)
    if shape == "decision":
        return _decision(parsed, ok) is not None
    if shape != "ranking" or not ok or not isinstance(parsed, dict) \
            or not isinstance(gold, dict):
        return False
    letters = sorted(str(x) for x in gold.get("ranking") or [])
    return bool(letters) and bool(returned_ranking(parsed.get("ranking"), letters)) \
        and _usable_decisions(parsed, letters) is not None


def common_pool(task: str, answers: Mapping[str, Mapping[str, Answer]]) -> list[str]:
    """The item ids (sorted) that every method answered validly; ``answers`` maps a method to
    its answers by item id. Empty when no method is given."""
    pools = [{item for item, answer in by_item.items() if valid_answer(task, *answer)}
             for by_item in answers.values()]
    return sorted(set.intersection(*pools)) if pools else []


def pool_table(task: str, answers: Mapping[str, Answer], ids: Sequence[str]) -> Table:
    """One method's metric table on the pooled ``ids`` (:data:`DISH_METRICS` or
    :data:`RANK_METRICS`; CTC pooled over all pairs of the pool)."""
    chosen = [answers[item] for item in ids]
    table = dish_table if _shape(task) == "decision" else rank_table
    return table([a[0] for a in chosen], [a[1] for a in chosen], [a[2] for a in chosen])


def pooled_method(method: str) -> bool:
    """Whether a method joins Table 1's common pool: a text-input prompting mode, named
    ``fam-<mode>`` without an ``[input]`` suffix; the rule-based ``fam-reference`` does not."""
    return method.startswith("fam-") and "[" not in method and method != "fam-reference"
