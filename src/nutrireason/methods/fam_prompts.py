"""FAM-Bench prompts (our wording of the Appendix L contract) and answer parsing.

All modes share one JSON output contract. Dish level: ``decision`` ("recommend" or
"not_recommend") and ``rationale_ingredients`` (per condition, ingredient names from the recipe).
Ranking: ``ranking``, the four letters from most to least suitable. CoT modes add a
``reasoning_steps`` array before the decision (ignored by the scorer); knowledge-injection (KI)
modes add ``condition_reference`` to the user payload: the focal conditions' knowledge-base
entries (foods and concepts to favour, limit or avoid, and the nutrient limits), never a per-dish
label.

Parsing is forgiving about the wrapping and strict about the content: the first JSON object in
the text (code fences and chatter around it are ignored) is read; without one, a plain-text
fallback looks for the decision words or a letter sequence. ``parse_mode`` says which path gave
the answer ("json", "fallback" or "failed").
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

_KI = """The user message may carry "condition_reference": general knowledge-base guidance on foods
that help or conflict with each condition. Use it as background only: the decision must rest on
this recipe, and the ingredients you cite must come from the recipe, not from the reference."""


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
- Give one entry per listed condition.
- Ingredients come from the recipe's ingredient list, as plain lower-case food names."""


def parse_proposal(text: str, names: dict[str, str]) -> tuple[dict[str, Any], str]:
    """({"sides": {condition id: side}, "ingredients": {...}}, parse_mode) from a proposal;
    ``names`` maps normalised condition names to ids (unknown names are ignored)."""
    found = first_json_object(text, "annotations")
    sides: dict[str, str] = {}
    cited: dict[str, list[str]] = {}
    entries = found.get("annotations") if found else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        condition = names.get(condition_key(str(entry.get("condition", ""))))
        raw = str(entry.get("decision", "")).strip().lower()
        side = "neutral" if raw == "neutral" else decision_value(raw)
        if condition is None or side is None or condition in sides:
            continue
        sides[condition] = side
        cited[condition] = cited_ingredients([entry])
    return {"sides": sides, "ingredients": cited}, "json" if sides else "failed"


def system_prompt(task: str, cot: bool, ki: bool) -> str:
    """The system prompt for a task ("dish" or "rank") and mode."""
    dish = task == "dish"
    parts = [_DISH_TASK if dish else _RANK_TASK]
    if cot:
        parts.append(_COT % (_COT_DISH_DECIDE if dish else _COT_RANK_DECIDE))
    contract = _CONTRACT_DISH if dish else _CONTRACT_RANK
    parts.append(contract % (_REASONING_FIELD if cot else ""))
    if ki:
        parts.append(_KI)
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


def condition_reference(entry: ConditionKB) -> dict[str, Any]:
    """One condition's knowledge-base entry as injected in KI modes (no per-dish content)."""
    limits = [f"{n.nutrient.replace('_', ' ')} {'above' if n.max is not None else 'below'} "
              f"{n.max if n.max is not None else n.min:g} {n.unit} per "
              f"{'100 g' if n.per == '100g' else n.per}" for n in entry.nutrient_limits]

    def side(name: str) -> list[str]:
        chosen = entry.side(name)  # type: ignore[arg-type]
        return list(dict.fromkeys([*chosen.foods, *map(_concept_text, chosen.concepts)]))

    return {"recommend": side("beneficial"), "limit": side("limit"), "avoid": side("avoid"),
            "nutrient_limits": limits}


def payload_text(payload: dict[str, Any]) -> str:
    """The user payload as indented JSON."""
    return json.dumps(payload, ensure_ascii=False)


# --------------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
_NOT_REC = re.compile(r"(?:\bnot|n't|\bnever|\bcannot)[\s_-]*(?:be[\s_-]*)?recommend",
                      re.IGNORECASE)
_REC = re.compile(r"\brecommend(?:s|ed)?\b", re.IGNORECASE)
_LETTER = re.compile(r"^\W*(?:dish|option)?\s*([A-D])\b", re.IGNORECASE)
_DECISION_FIELD = re.compile(r'"decision"\s*:\s*"([^"]*)"')
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
    """ "recommend" / "not_recommend" from the spellings models use, else None."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if _NOT_REC.search(text) or text in ("no", "not suitable", "unsuitable"):
        return NOT_REC
    if _REC.search(text) or text in ("yes", "suitable"):
        return REC
    return None


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
        return decision_value(field.group(1))
    if _NOT_REC.search(text or ""):
        return NOT_REC
    return REC if _REC.search(text or "") else None


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
