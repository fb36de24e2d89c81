"""FAM-Bench prompts (our wording of the Appendix L contract) and answer parsing.

All modes share one JSON output contract. Dish level: ``decision`` ("recommend" or
"not_recommend") and ``rationale_ingredients`` (per condition, ingredient names from the recipe).
Ranking: ``ranking``, the four letters from most to least suitable. CoT modes add a
``reasoning_steps`` array before the decision (ignored by the scorer); knowledge-injection (KI)
modes add ``condition_reference`` to the user payload: per focal condition, the knowledge-base
foods and concepts to "recommend" and to "not_recommend" (paper Appendix L, Listing 2), never a
per-dish label; the KI-with-limits modes add the condition's nutrient limits to it.

Parsing is forgiving about the wrapping and strict about the content: the first JSON object in
the text (code fences and chatter around it are ignored) is read; without one, a plain-text
fallback looks for the decision words or a letter sequence. An answer that only echoes the
choice ("recommend|not_recommend", "recommend or not_recommend") has no decision, and advice
against the dish ("I recommend avoiding it") is "not_recommend". ``parse_mode`` says which path
gave the answer ("json", "fallback" or "failed").
"""

from __future__ import annotations

import json
import re
from typing import Any

from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import ConditionKB
from nutrireason.fam.proposals import condition_key

LETTERS = ("A", "B", "C", "D")

_CONTRACT_DISH = """Answer with JSON only, in exactly this shape:
{
  %s"decision": "recommend" or "not_recommend",
  "rationale_ingredients": [
    {"condition": "<condition name>", "ingredients": ["<ingredient name>", "..."]}
  ]
}
Rules:
- "decision" is exactly "recommend" or "not_recommend".
- Leave "rationale_ingredients" empty only when no ingredient bears on the decision.
- Give each condition its own entry, named briefly as in the question.
- Ingredients come from the recipe's ingredient list, as plain lower-case food names without
  amounts, units, preparation or brand ("olive oil", not "2 tbsp extra-virgin olive oil").
- List only the ingredients that drive the decision for that condition."""

_CONTRACT_RANK = """Answer with JSON only, in exactly this shape:
{
  %s"ranking": ["<letter>", "<letter>", "<letter>", "<letter>"]
}
Rules:
- "ranking" lists each of A, B, C and D exactly once, most suitable first.
- Judge suitability for all the conditions in the question together."""

_REASONING_FIELD = '"reasoning_steps": ["<step 1>", "<step 2>", "..."],\n  '

_DISH_TASK = """You judge whether a dish suits a person managing one or more health conditions.
- Decide whether the dish should be recommended or not recommended for the condition(s) in the
  question.
- Back the decision with the recipe ingredients that matter for each condition.
- Use only what the recipe and the question give you."""

_RANK_TASK = """You compare four dishes, labelled A, B, C and D, for a person managing one or more
health conditions.
- Rank the four dishes from most to least suitable for the condition(s) in the question.
- Use only what the recipes and the question give you."""

_COT = """Think step by step before answering, and write your reasoning as 2 to 6 short strings in
"reasoning_steps":
1. Name each health condition in the question.
2. For each condition, go through the ingredients and nutrition and note what clearly helps or
   conflicts with it.
3. Weigh what helps against what conflicts.
4. %s"""

_COT_DISH_DECIDE = ('Decide "recommend" only when the evidence as a whole supports the dish; '
                    'otherwise "not_recommend".')
_COT_RANK_DECIDE = "Order the dishes by how well each fits all the conditions together."

_KI = """The user message may carry "condition_reference": for each condition, general
knowledge-base lists of foods to "recommend" and foods to "not_recommend". Use it as background
only: the decision must rest on this recipe, and the ingredients you cite must come from the
recipe, not from the reference."""

_KI_LIMITS = """Each condition's reference also lists "nutrient_limits": nutrient levels that
conflict with the condition. Compare them with the recipe's nutrition where it is given."""


PROPOSE_SYSTEM = """You annotate one dish for a list of health conditions.
- For each condition in the list, decide whether the dish should be recommended, not
  recommended, or is neutral for a person managing that condition.
- For each recommend or not_recommend decision, name the recipe ingredients that drive it.
- Use only what the recipe gives you.

Answer with JSON only, in exactly this shape:
{
  "annotations": [
    {"condition": "<condition name as listed>", "decision": "recommend" or "not_recommend" or
     "neutral", "ingredients": ["<ingredient name>", "..."]}
  ]
}
Rules:
- Give one entry per listed condition, named as in the list.
- "ingredients" lists the recipe ingredients that drive a recommend or not_recommend decision,
  as plain lower-case food names without amounts, units, preparation or brand ("olive oil",
  not "2 tbsp extra-virgin olive oil"); leave it empty for neutral."""

_CORRECTION = """A rule check of your answer against the knowledge base disagrees with it:
%s

Reconsider these conditions against the recipe. Change a decision where the finding shows it
was wrong; keep it only if you are sure the finding does not apply to this dish. Then answer
once more with the complete annotation for every listed condition, as JSON in exactly the same
shape as before."""


def correction_prompt(conflicts: list[dict[str, Any]]) -> str:
    """The corrective turn of the annotation loop (paper Appendix E: a single corrective pass
    with the specific conflicts surfaced). Each conflict: {"condition" (label), "proposed",
    "rules" (sides), "findings" (the rule findings in words)}."""
    lines = []
    for conflict in conflicts:
        findings = "; ".join(conflict.get("findings") or []) or "no detail recorded"
        lines.append(f'- your proposal said "{conflict["proposed"]}" for {conflict["condition"]}, '
                     f"but the rule check found: {findings}. The rules put the dish on the "
                     f'"{conflict["rules"]}" side.')
    return _CORRECTION % "\n".join(lines)


_NEUTRAL_WORDS = frozenset({"neutral", "none", "n/a", "na", "not applicable", "no effect",
                            "no impact", "irrelevant", "not relevant", "either"})
_SHORT_SIDES = {"rec": REC, "notrec": NOT_REC, "not_rec": NOT_REC, "nonrec": NOT_REC}
_PAPER_KEYS = {"rec": REC, "not_rec": NOT_REC, "notrec": NOT_REC, "recommend": REC,
               "not_recommend": NOT_REC, "recommended": REC, "not_recommended": NOT_REC}


def proposal_side(value: Any) -> str | None:
    """ "recommend", "not_recommend" or "neutral" from a proposal's decision, else None."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text in _NEUTRAL_WORDS:
        return "neutral"
    short = re.sub(r"[\s-]+", "_", text)
    return _SHORT_SIDES.get(short) or _SHORT_SIDES.get(short.replace("_", "")) \
        or decision_value(text)


def _names(value: Any) -> list[str]:
    """Ingredient names from a list (or a comma-separated string), lower-case, each once."""
    if isinstance(value, str):
        value = value.split(",")
    names = [v.strip().lower() for v in value if isinstance(v, str)] \
        if isinstance(value, list) else []
    return list(dict.fromkeys(n for n in names if n))


def _proposal_entries(found: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """(condition name, decision, ingredients) in answer order, from the contract's
    ``annotations`` list, an ``annotations`` mapping {condition: decision or entry}, or the
    paper's shape {"rec": [...], "not_rec": [...]} of (condition, ingredients) entries."""
    entries = found.get("annotations")
    if isinstance(entries, list):
        return [(e.get("condition"), e.get("decision"), e.get("ingredients", e.get("evidence")))
                for e in entries if isinstance(e, dict)]
    if isinstance(entries, dict):
        return [(name, e.get("decision"), e.get("ingredients", e.get("evidence")))
                if isinstance(e, dict) else (name, e, None) for name, e in entries.items()]
    rows = []
    for key, value in found.items():
        side = _PAPER_KEYS.get(re.sub(r"[\s-]+", "_", str(key).strip().lower()))
        for entry in value if side and isinstance(value, list) else []:
            if isinstance(entry, dict):
                rows.append((entry.get("condition"), side, entry.get("ingredients")))
            elif isinstance(entry, str):
                rows.append((entry, side, None))
    return rows


def parse_proposal(text: str, names: dict[str, str]) -> tuple[dict[str, Any], str]:
    """({"sides": {condition id: side}, "ingredients": {condition id: [names]}}, parse_mode)
    from a proposal. ``names`` maps normalised condition names to ids (unknown names are
    ignored; a repeated condition keeps its first answer). Cited ingredients (E_h) are kept for
    recommend / not_recommend only; an answer without them (the older contract) parses with
    none."""
    found = first_json_object(text, "annotations")
    sides: dict[str, str] = {}
    cited: dict[str, list[str]] = {}
    for name, decision, ingredients in _proposal_entries(found or {}):
        condition = names.get(condition_key(str(name or "")))
        side = proposal_side(decision)
        if condition is None or side is None or condition in sides:
            continue
        sides[condition] = side
        if side != "neutral":
            cited[condition] = _names(ingredients)
    return {"sides": sides, "ingredients": cited}, "json" if sides else "failed"


def system_prompt(task: str, cot: bool, ki: bool, limits: bool = False) -> str:
    """The system prompt for a task ("dish" or "rank") and mode; ``limits`` (KI modes only)
    adds the note on the nutrient limits of :func:`condition_reference`."""
    dish = task == "dish"
    parts = [_DISH_TASK if dish else _RANK_TASK]
    if cot:
        parts.append(_COT % (_COT_DISH_DECIDE if dish else _COT_RANK_DECIDE))
    contract = _CONTRACT_DISH if dish else _CONTRACT_RANK
    parts.append(contract % (_REASONING_FIELD if cot else ""))
    if ki:
        parts.append(_KI)
    if ki and limits:
        parts.append(_KI_LIMITS)
    return "\n\n".join(parts)


def condition_question(labels: list[str], rank: bool) -> str:
    """The question sentence naming the target condition(s)."""
    named = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    if rank:
        return (f"Rank dishes A, B, C and D from most to least suitable for someone managing "
                f"{named}.")
    return f"Is this dish suitable for someone managing {named}?"


def _concept_text(concept: str) -> str:
    return concept.replace("_", " ")


def _side_texts(entry: ConditionKB, *names: str) -> list[str]:
    """The foods, then the concept texts, of the named sides, each once, in order."""
    sides = [entry.side(name) for name in names]  # type: ignore[arg-type]
    foods = [food for side in sides for food in side.foods]
    concepts = [_concept_text(concept) for side in sides for concept in side.concepts]
    return list(dict.fromkeys([*foods, *concepts]))


def nutrient_limit_texts(entry: ConditionKB) -> list[str]:
    """The condition's nutrient limits in words, e.g. "sodium above 600 mg per serving"."""
    return [f"{n.nutrient.replace('_', ' ')} {'above' if n.max is not None else 'below'} "
            f"{n.max if n.max is not None else n.min:g} {n.unit} per "
            f"{'100 g' if n.per == '100g' else n.per}" for n in entry.nutrient_limits]


def condition_reference(entry: ConditionKB, limits: bool = False) -> dict[str, Any]:
    """One condition's knowledge-base entry as injected in KI modes (paper Appendix L,
    Listing 2): "recommend" (beneficial foods and concepts) and "not_recommend" (foods and
    concepts to limit or avoid); ``limits`` adds "nutrient_limits". No per-dish content."""
    reference: dict[str, Any] = {"recommend": _side_texts(entry, "beneficial"),
                                 "not_recommend": _side_texts(entry, "limit", "avoid")}
    if limits:
        reference["nutrient_limits"] = nutrient_limit_texts(entry)
    return reference


def payload_text(payload: dict[str, Any]) -> str:
    """The user payload as indented JSON."""
    return json.dumps(payload, ensure_ascii=False)


# --------------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
# Decision words are read in three passes over the lower-cased text: negated forms ("not
# recommended", "wouldn't recommend") and advice against the dish ("recommend avoiding it") become
# a "not" mark, the remaining "recommend(s/ed)" a "yes" mark; then an echo of the choice itself
# ("recommend|not_recommend", "recommended or not") is dropped before the marks are counted.
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\bcannot)(?:\s+(?:really|strongly|generally|"
                      r"personally|honestly|usually|typically|ever))?[\s_-]*(?:be[\s_-]*)?"
                      r"recommend\w*")
_AGAINST = re.compile(r"\brecommend(?:s|ed)?\s+(?:that\s+)?(?:(?:you|they|patients?|people|"
                      r"one|them)\s+|to\s+)?(?:against|avoid|limit|skip|restrict|reduc|"
                      r"minimi[sz]|eliminat|exclud|refrain|abstain|steer|stay\w*\s+away|"
                      r"cut\w*\s+(?:out|back|down)|not\b|never\b|alternative|another|"
                      r"a\s+different|other\s+(?:dish|option|meal|choice))\w*")
_PLAIN = re.compile(r"\brecommend(?:s|ed)?\b")
_YES, _NO = "\ue000", "\ue001"  # marks that no model output contains
_PAD = r"""[\s"'`*()\[\]]{0,3}"""
_LINK = _PAD + r"(?:\||/|,|\bor\b|\band\b|\bvs\b\.?|\bversus\b)" + _PAD
_CHOICE = re.compile(f"{_YES}{_LINK}{_NO}|{_NO}{_LINK}{_YES}|{_YES}{_PAD}or\\s+not\\b")
_LETTER = re.compile(r"^\W*(?:dish|option)?\s*([A-D])\b", re.IGNORECASE)
_DECISION_FIELD = re.compile(r'"decision"\s*:\s*("[^"]*"(?:\s*(?:or|\||/)\s*"[^"]*")*)')
_RANKING_FIELD = re.compile(r'"ranking"\s*:\s*\[([^\]]*)')
_SEQUENCE = re.compile(r"\b([A-D])(?:\s*(?:,|>|-+>?|→|\s)\s*[A-D]\b){1,3}")


def first_json_object(text: str, key: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` that has ``key`` (else the first object), or None."""
    cleaned = _FENCE.sub("", text or "")
    decoder = json.JSONDecoder()
    first = None
    for start in (m.start() for m in re.finditer(r"\{", cleaned)):
        try:
            value, _ = decoder.raw_decode(cleaned, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            if key in value:
                return value
            first = first if first is not None else value
    return first


def decision_value(value: Any) -> str | None:
    """ "recommend" / "not_recommend" from the spellings models use, else None (also for an
    echo of the choice, such as "recommend|not_recommend")."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text in ("no", "not suitable", "unsuitable"):
        return NOT_REC
    if text in ("yes", "suitable"):
        return REC
    return words_decision(text)


def words_decision(text: str) -> str | None:
    """The decision the words of ``text`` commit to: any advice against the dish wins over a
    plain "recommend"; a choice named without committing ("recommend or not_recommend",
    "recommended or not") counts for neither side."""
    marked = _NEGATED.sub(_NO, (text or "").lower())
    marked = _PLAIN.sub(_YES, _AGAINST.sub(_NO, marked))
    marked = _CHOICE.sub(" ", marked)
    if _NO in marked:
        return NOT_REC
    return REC if _YES in marked else None


def cited_ingredients(value: Any) -> list[str]:
    """Ingredient names from ``rationale_ingredients`` (entries or a flat list)."""
    names: list[str] = []
    for entry in value if isinstance(value, list) else []:
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("ingredients"), list):
            names += [i for i in entry["ingredients"] if isinstance(i, str)]
    return list(dict.fromkeys(n.strip() for n in names if n.strip()))


def parse_dish(text: str) -> tuple[dict[str, Any], str]:
    """({"decision", "ingredients"}, parse_mode) from a dish-level answer."""
    found = first_json_object(text, "decision")
    if found is not None and decision_value(found.get("decision")) is not None:
        return {"decision": decision_value(found["decision"]),
                "ingredients": cited_ingredients(found.get("rationale_ingredients"))}, "json"
    decision = _text_decision(text)
    return {"decision": decision, "ingredients": []}, "fallback" if decision else "failed"


def _text_decision(text: str) -> str | None:
    field = _DECISION_FIELD.search(text or "")  # a cut-off JSON answer still names it
    if field:
        return decision_value(field.group(1).strip('"'))
    return words_decision(text)


def ranking_letters(value: Any) -> list[str]:
    """Distinct A-D letters in order from a ``ranking`` list (or a string of letters)."""
    items = value if isinstance(value, list) else re.split(r"[,>\s]+", value) \
        if isinstance(value, str) else []
    letters: list[str] = []
    for item in items:
        match = _LETTER.match(str(item))
        if match and match.group(1).upper() not in letters:
            letters.append(match.group(1).upper())
    return letters


def parse_rank(text: str) -> tuple[dict[str, Any], str]:
    """({"ranking"}, parse_mode) from a ranking answer."""
    found = first_json_object(text, "ranking")
    if found is not None:
        letters = ranking_letters(found.get("ranking"))
        if letters:
            return {"ranking": letters}, "json"
    field = _RANKING_FIELD.search(text or "")
    if field:
        letters = ranking_letters(re.findall(r'"([^"]*)"', field.group(1)))
        if letters:
            return {"ranking": letters}, "fallback"
    letters = _last_sequence(text or "")
    return {"ranking": letters}, "fallback" if letters else "failed"


def _last_sequence(text: str) -> list[str]:
    """The last letter sequence naming all four dishes, else the last sequence (a model
    restating "dishes A, B, C and D" before its answer is not ranking them)."""
    found = [ranking_letters(re.findall(r"[A-D]", m.group(0))) for m in _SEQUENCE.finditer(text)]
    full = [letters for letters in found if len(letters) == len(LETTERS)]
    return (full or found or [[]])[-1]
