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
from nutrireason.methods.reading import (
    CONCLUDING,
    Reading,
    boxed,
    committed_clauses,
    found,
    is_hedge,
    json_values,
    last_object_with,
    missing,
    opens_with_hedge,
    parse_mode,
    plain,
    read_output,
    without_objects,
)

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


# ------------------------------------------------------------- dish level: rules per form

_JSON_DECISION_KEYS = ("decision", "recommendation", "verdict", "final_decision",
                       "final_answer", "answer", "suitable", "recommended")
_JSON_CITATION_KEYS = ("rationale_ingredients", "rationale", "ingredients", "key_ingredients",
                       "evidence")
_UNDECIDED = re.compile(r"^\W*(?:maybe|unsure|uncertain|unknown|undecided|depends|it depends|"
                        r"n/?a|neutral|mixed|either|conditional|moderation only)\W*$", re.I)
# "recommended daily intake", "guidelines recommend limiting sodium": advice in general, not
# a decision on the dish.
_GENERAL_ADVICE = re.compile(
    r"\brecommended\s+(?:daily|dietary|intake|limit|amount|serving|levels?|allowance|range)\b"
    r"|\b(?:guidelines?|experts?|doctors?|dietitians?|the\s+(?:aha|ada|who|kdigo|acg|acr|nkf)"
    r"|aha|ada|who|kdigo|acg|acr|nkf|it\s+is\s+(?:generally|often|usually)|(?:generally|often|"
    r"usually|typically))\s+(?:\w+\s+)?recommend\w*\b[^.;,]*", re.I)
_SUITS = re.compile(
    r"(?P<no>(?:\bnot|n't|\bnever|\bhardly)\s+(?:\w+\s+){0,2}?(?:suitable|appropriate|advisable|"
    r"a\s+(?:good|great|safe|wise|healthy|suitable|ideal)\s+(?:choice|option|fit|idea|dish))"
    r"|unsuitable|inappropriate|inadvisable|should\s+(?:be\s+)?avoid(?:ed)?|\bavoid\b|"
    r"poor\s+(?:choice|option|fit)|steer\s+clear|best\s+avoided|not\s+safe"
    r"|(?:\bnot|n't|\bnever)\s+(?:\w+\s+){0,2}?(?:advise|suggest|endorse|advocate)\w*|\badvise\s+"
    r"against\b|\bskip\s+(?:it|this)\b)"
    r"|(?P<yes>\bsuitable\b|\bappropriate\b|\b(?:good|great|safe|excellent|healthy|solid|"
    r"reasonable|fine|suitable)\s+(?:choice|option|fit|dish)\b|\bsafe\s+to\s+eat\b"
    r"|\b(?:fine|ok|okay|acceptable)\s+(?:to\s+(?:eat|have|enjoy)\s+)?(?:once\s+in\s+a\s+while"
    r"|occasionally|in\s+moderation|now\s+and\s+then|from\s+time\s+to\s+time|sometimes)\b"
    r"|\bgo\s+for\s+it\b|\bcan\s+(?:safely\s+)?be\s+(?:enjoyed|eaten|included|had)\b"
    r"|\b(?:enjoy|eat|have)\s+(?:it\s+|this\s+(?:dish\s+)?)?in\s+moderation\b)", re.I)
_DECISION_LABEL = re.compile(
    r"^[\W_]*(?:final\s+)?(?:decision|recommendation|verdict|answer|conclusion|"
    r"suitability|bottom\s+line|tl;?dr|in\s+short|summary|overall)\s*(?:for\s+[^:\n]{1,60})?\s*(?:[:=\-\u2013\u2014]|is\b)\s*(.*)$",
    re.I | re.M)
_INGREDIENT_LABEL = re.compile(
    r"(?:^|(?<=[.;])[ \t]+)[^\w\n]*(?:[\w-]+[ \t_]+){0,3}?ingredients?"
    r"(?:[ \t]+(?:driving|behind|for|that[ \t]+drive|of[ \t]+concern|to[ \t]+(?:limit|avoid)"
    r"|involved|cited|that[ \t]+matter)[^:\n]{0,60})?(?:[ \t]*\([^)\n]*\))?"
    r"[ \t]*[:\u2013\u2014][ \t]*(.*)$", re.I | re.M)
_LEADING_YES_NO = re.compile(r"^[\W_]*(yes|no)\b", re.I)


def clause_decision(text: str) -> str | None:
    """The decision one clause commits to: a leading yes/no, the recommend words
    (:func:`words_decision`), then suitability words ("not suitable", "avoid", "a good
    choice"); advice in general ("recommended daily intake") is not a decision."""
    leading = _LEADING_YES_NO.match(text)
    if leading:
        return REC if leading.group(1).lower() == "yes" else NOT_REC
    cleaned = _GENERAL_ADVICE.sub(" ", text)
    decision = words_decision(cleaned)
    if decision is not None:
        return decision
    suits = [m for m in _SUITS.finditer(cleaned)]
    if not suits:
        return None
    return NOT_REC if suits[0].group("no") else REC


def prose_decision(text: str) -> str | None:
    """The decision of a final answer in words: the last concluding clause that decides
    ("Overall, not recommended"), else the first clause that decides (answer first, then
    caveats); clauses that decline or hedge are left out."""
    text = without_objects(text)
    decided = [(clause, clause_decision(clause)) for clause in committed_clauses(text)]
    decided = [(clause, d) for clause, d in decided if d is not None]
    concluding = [d for clause, d in decided if CONCLUDING.match(clause)]
    if concluding:
        return concluding[-1]
    if opens_with_hedge(text):
        return None  # "This dish could go either way. The salmon is a good choice, but ..."
    return decided[0][1] if decided else None


# "Offending ingredients" alone on its line, the bullets under it
_BARE_INGREDIENT_LABEL = re.compile(
    r"^([^\w\n]*(?:[\w-]+[ \t]+){0,3}ingredients?\b[^:\n]{0,60}?)[ \t]*$"
    r"(?=\n[ \t]*(?:[-*•+]|\d+[.)])[ \t]+)", re.I | re.M)


def labelled_text(text: str) -> str:
    """``text`` with markdown removed, two-cell table rows as "key: value" lines and a heading
    without a colon as a label whose value is the next line ("### Decision" / "Recommend")."""
    text = re.sub(r"^([ \t]*#{1,6}[ \t]+[^:\n]*?)[ \t]*$", r"\1:", text, flags=re.M)
    text = _BARE_INGREDIENT_LABEL.sub(r"\1:", text)
    lines = plain(table_as_labels(text)).split("\n")
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].rstrip().endswith(":") and line.strip() and \
                not re.match(r"^\s*(?:[-*•+]|\d+[.)])\s", line) and \
                _DECISION_LABEL.match(joined[-1]):
            joined[-1] = f"{joined[-1].rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return "\n".join(joined)


def _labelled_decision(text: str) -> str | None:
    """ "Decision: not recommended", "**Recommendation:** Recommend (in moderation)"."""
    for match in reversed(list(_DECISION_LABEL.finditer(labelled_text(text)))):
        value = match.group(1).strip()
        if value and not is_hedge(value):
            decision = decision_value(value.split(".")[0]) or prose_decision(value)
            if decision is not None:
                return decision
    return None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")] if line.count("|") >= 2 \
        else []


def _is_rule(cells: list[str]) -> bool:
    return bool(cells) and all(c and set(c) <= set("-: ") for c in cells)


def table_as_labels(text: str) -> str:
    """Markdown tables as "key: value" lines: a two-cell row ("| Decision | recommend |"),
    and a table with a header row gives each data cell its column's header ("Decision:
    not_recommend", "Ingredients: sugar, cream")."""
    lines = text.split("\n")
    out: list[str] = []
    header: list[str] = []
    for index, line in enumerate(lines):
        cells = _cells(line)
        following = _cells(lines[index + 1]) if index + 1 < len(lines) else []
        if _is_rule(cells):
            continue
        if len(cells) >= 2 and _is_rule(following):
            header = cells
            continue
        if header and len(cells) == len(header):
            out += [f"{name}: {value}" for name, value in zip(header, cells, strict=True)]
            if len(cells) == 2:  # "| Decision | recommend |" under "| Field | Value |"
                out.append(f"{cells[0]}: {cells[1]}")
            continue
        header = [] if not cells else header
        out.append(f"{cells[0]}: {cells[1]}" if len(cells) == 2 and cells[0] else line)
    return "\n".join(out)


def _label_name(match: re.Match[str]) -> str:
    """The label of an ingredient label line ("Driving ingredients"), lower-cased."""
    return match.group(0)[:match.start(1) - match.start(0)].strip(" :\t").lower()


def _labelled_ingredients(text: str) -> list[str]:
    """Ingredient names after an "Ingredients:" label ("Key ingredients:", "Problem
    ingredients:", a table row), on its line or as the bullets after it; a condition named
    before them ("hypertension -> soy sauce") is left out."""
    cleaned = labelled_text(text)
    labels = list(_INGREDIENT_LABEL.finditer(cleaned))
    if not labels:
        return []
    rest = re.split(r"->|→|=>", labels[-1].group(1).strip())[-1].strip()
    same = [m for m in labels if _label_name(m) == _label_name(labels[-1]) and m.group(1).strip()]
    if rest and len(same) > 1:  # a per-condition table: one label line per row, merged
        rest = ", ".join(re.split(r"->|→|=>", m.group(1).strip())[-1] for m in same)
    if rest:
        names = re.split(r",|;|\band\b", rest)
    else:
        lines = cleaned[labels[-1].end():].strip("\n").split("\n")
        names = []
        for line in lines:
            bullet = re.match(r"^\s*(?:[-*•+]|\d+[.)])\s+(.*)$", line)
            if not bullet:
                break
            names.append(re.split(r"\s[-\u2013\u2014(:]|:", bullet.group(1))[0])
    return cited_ingredients([n.strip(" .*`\"'[](){}") for n in names])


def _json_dish(text: str) -> tuple[Reading | None, bool]:
    """The last JSON object with a decision: (reading or None, whether a decision key was
    found with a value that decides nothing)."""
    hit = last_object_with(text, _JSON_DECISION_KEYS)
    if hit is None:
        return None, False
    obj, key = hit
    value = obj[key]
    if isinstance(value, bool):
        value = "yes" if value else "no"
    decision = decision_value(value)
    if decision is None:  # a template left unfilled ("recommend|not_recommend") is no answer
        echoed = isinstance(value, str) and "recommend" in value.lower()
        return None, value is not None and not echoed
    cited = next((obj[k] for k in obj if str(k).lower() in _JSON_CITATION_KEYS), None)
    return found({"decision": decision, "ingredients": cited_ingredients(cited)}, "json"), False


def read_dish(text: str) -> Reading:
    """A dish-level final answer: the last JSON object's decision and cited ingredients; else a
    JSON decision field left unclosed; else a "Decision:" label, ``\\boxed{}``, or the words of
    the answer (:func:`prose_decision`), with the ingredients of an "Ingredients:" label."""
    reading, undecided = _json_dish(text)
    if reading is not None:
        return reading
    if undecided:
        return missing("hedge", "json")
    field = list(_DECISION_FIELD.finditer(text))
    if field:
        decision = decision_value(field[-1].group(1).strip('"'))
        return found({"decision": decision, "ingredients": []}, "json_field") \
            if decision else missing()
    for name, rule in (("marker", _labelled_decision),
                       ("boxed", lambda t: decision_value(boxed(t) or "")),
                       ("decision_words", prose_decision)):
        decision = rule(text)
        if decision is not None:
            return found({"decision": decision, "ingredients": _labelled_ingredients(text)},
                         name)
    return missing()


def parse_dish(text: str) -> tuple[dict[str, Any], str]:
    """({"decision", "ingredients"}, parse_mode) from a dish-level answer."""
    reading = read_dish_output(text)
    return dish_value(reading), parse_mode(reading)


def dish_value(reading: Reading) -> dict[str, Any]:
    """The parsed dish-level answer: the reading's value, or no decision when it has none."""
    return reading.value if reading.ok else {"decision": None, "ingredients": []}


def rank_value(reading: Reading) -> dict[str, Any]:
    """The parsed ranking: the reading's value, or an empty ranking when it has none."""
    return reading.value if reading.ok else {"ranking": []}


def read_dish_output(text: str | None, reasoning: str | None = None,
                     finish_reason: str | None = None) -> Reading:
    """One dish-level output as a grader reads it (reasoning apart, cut-off refused)."""
    return read_output(text, read_dish, reasoning, finish_reason)


# ------------------------------------------------------------------- ranking: rules per form


def ranking_letters(value: Any, titles: dict[str, str] | None = None) -> list[str]:
    """Distinct A-D letters in order from a ``ranking`` list (or a string of letters); with
    ``titles`` (letter -> dish title) an entry may name the dish by its title."""
    if isinstance(value, list):
        items = value
    elif isinstance(value, str):
        items = _sequence_items(value)
        items = re.split(r"\s+", value.strip()) if len(items) == 1 and not titles else items
    else:
        items = []
    letters: list[str] = []
    for item in items:
        letter = letter_of(str(item), titles)
        if letter and letter not in letters:
            letters.append(letter)
    return letters


_NAMED_LETTER = re.compile(r"\b(?:dish|option|recipe|meal|choice)\s*\(?([A-Da-d])\)?(?![\w'])"
                           r"|\(([A-D])\)|\[([A-D])\]|(?<![\w'])([A-D])(?![\w'])")
_ALONE_LETTER = re.compile(r"^\W*(?:dish|option|recipe|meal|choice)?\s*\(?([A-Da-d])\)?\W*$",
                           re.I)


def letter_of(item: str, titles: dict[str, str] | None = None) -> str | None:
    """The dish an entry names: a letter alone (any case), "Dish B", "(C)", a capital letter
    as a word, or (with ``titles``) the dish's title; None when it names none."""
    text = plain(item).strip()
    alone = _ALONE_LETTER.match(text)
    if alone:
        return alone.group(1).upper()
    named = _NAMED_LETTER.search(text)
    if named:
        return next(g for g in named.groups() if g).upper()
    return _title_letter(text, titles) if titles else None


def _title_words(text: str) -> str:
    """Lower-case words of a title or entry, "&" read as "and", a leading "the" dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("&", " and "))
    return " ".join(words[1:] if words[:1] == ["the"] else words)


def _title_letter(text: str, titles: dict[str, str]) -> str | None:
    """The letter whose title the text names: the longest title found in it (or it in a
    title), else the one title that matches its words closely (rapidfuzz, 90 or more)."""
    lowered = _title_words(text)
    best: tuple[int, str] | None = None
    for letter, title in titles.items():
        words = _title_words(title)
        named = words and (f" {words} " in f" {lowered} " or
                           (len(lowered) >= 4 and f" {lowered} " in f" {words} "))
        if named and (best is None or len(words) > best[0]):
            best = (len(words), letter)
    if best is not None:
        return best[1]
    from rapidfuzz import fuzz

    scored = sorted(((max(fuzz.partial_ratio(_title_words(title), lowered),
                          fuzz.token_set_ratio(_title_words(title), lowered)), letter)
                     for letter, title in titles.items() if title), reverse=True)
    if scored and scored[0][0] >= 90 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return scored[0][1]
    return None


_SEPARATOR = re.compile(r"\s*(?:>+|≫|→|⟶|➔|-+>|=+>|=|≈|,|;|\bthen\b|\bfollowed\s+by\b|\n)\s*",
                        re.I)


def _sequence_items(text: str) -> list[str]:
    return [part for part in _SEPARATOR.split(text) if part and part.strip()]


_RANK_KEYS = ("ranking", "final_ranking", "rank", "ranked", "order", "ranking_order", "answer")
_RANK_LABEL = re.compile(
    r"(?:^|\n)[^\n]*?\b(?:final\s+)?(?:ranking|rank\s+order|order|answer)\b[^:\n]{0,40}"
    r"(?::|=|\bis\b)[ \t]*([^\n]*)", re.I)
_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": 4, "1st": 1,
                  "2nd": 2, "3rd": 3, "4th": 4, "top": 1, "best": 1, "worst": 4,
                  "top pick": 1, "top choice": 1, "best choice": 1, "runner-up": 2,
                  "runner up": 2, "worst choice": 4, "least suitable": 4,
                  "most suitable": 1}
_RANK_LINE = re.compile(
    r"^\s*(?:[-*•+]\s*)?(?:\|\s*)?(?:#|rank(?:ed)?\s*(?:#|no\.?)?\s*|place\s*)?"
    r"(?:(\d)(?:st|nd|rd|th)?(?![\d])\s*(?:[.):\-–—|]|\s+place\b|\s)"
    r"|(first|second|third|fourth|last|1st|2nd|3rd|4th|most\s+suitable|least\s+suitable|best"
    r"|worst|top\s+pick|runner[\s-]up)\b\s*(?:place|choice)?\s*[.):\-–—,|]?)"
    r"\s*(.*)$", re.I | re.M)
_INLINE_ORDINAL = re.compile(
    r"(?<![\w-])(first|second|third|fourth|last|1st|2nd|3rd|4th|#[1-4]|no\.\s*[1-4]|top\s+pick"
    r"|top\s+choice|best\s+choice|runner[\s-]up|worst\s+choice|least\s+suitable)(?![\w-])"
    r"\s*(?:place|choice)?\s*(?::|-|–|—|,|\bis\b|\bgoes\s+to\b)?\s*([^;,\n.]+?)"
    r"(?=\s+(?:[1-4]\)|#[1-4]\b|(?:second|third|fourth|last)\b)|[;,\n.]|$)"
    r"|(?<![\w.#])([1-4])\)\s*([^;,\n]+?)(?=\s+[1-4]\)|[;,\n.]|$)", re.I)
_BEST_ONLY = re.compile(
    r"([^.\n]*?)\b(?:is|are|would\s+be|as)\s+(?:the\s+)?(?:best|most\s+suitable|top|"
    r"healthiest|safest|first)\b", re.I)


def _json_ranking(text: str, titles: dict[str, str] | None) -> list[str]:
    values = json_values(text)
    hit = last_object_with(text, _RANK_KEYS)
    arrays = [v for v in values if isinstance(v, list) and v and
              all(isinstance(x, str) for x in v)]
    if hit is not None and (not arrays or values.index(arrays[-1]) <
                            max(i for i, v in enumerate(values) if isinstance(v, dict))):
        value = hit[0][hit[1]]
        if isinstance(value, list):
            return ranking_letters([str(v) if not isinstance(v, dict) else
                                    next(iter(v.values()), "") for v in value], titles)
        if isinstance(value, str):
            return ranking_letters(value, titles)
    return ranking_letters(arrays[-1], titles) if arrays else []


def _numbered_ranking(text: str, titles: dict[str, str] | None) -> list[str]:
    """A numbered, ordinal or table-row list: the dish each line names, by its number (the
    last block of such lines that names dishes)."""
    blocks: list[list[tuple[int, str]]] = [[]]
    for line in text.split("\n"):
        match = _RANK_LINE.match(line)
        letters = _line_dishes(match.group(3), titles) if match else []
        if match and letters:
            number = int(match.group(1)) if match.group(1) else \
                _ORDINAL_WORDS[" ".join(match.group(2).lower().replace("-", " ").split())]
            blocks[-1] += [(number, letter) for letter in letters]
        elif line.strip() and blocks[-1] and not _is_continuation(line):
            blocks.append([])
    filled = [b for b in blocks if len(b) >= 2]
    if not filled:
        return _table_ranking(text, titles)
    ordered = sorted(filled[-1], key=lambda pair: pair[0])
    return list(dict.fromkeys(letter for _, letter in ordered))


def _line_dishes(rest: str, titles: dict[str, str] | None) -> list[str]:
    """The dishes a ranked line places: several when they tie ("2. A and D (tie)", "2. B =
    C"), in the order written; else the one it names first."""
    head = re.split(r"\s[-–—]\s|:|\|", rest.strip().strip("|").strip(), maxsplit=1)[0]
    head = re.sub(r"\((?:tie|tied)[^)]*\)|\btied?\b", " ", head, flags=re.I)
    parts = [p for p in re.split(r"\s*(?:,|&|/|=|\band\b)\s*", head) if p.strip()]
    if len(parts) > 1:
        letters = [_short_reference(part, titles) for part in parts]
        if all(letters):
            return list(dict.fromkeys(letters))  # type: ignore[arg-type]
    letter = _line_dish(rest, titles)
    return [letter] if letter else []


def _is_continuation(line: str) -> bool:
    """An indented or bulleted detail line under a numbered entry, or a table rule."""
    return bool(re.match(r"^(?:\s{2,}|\t|\s*[-*•+]\s|\s*\|?[\s:|-]+\|?\s*$)", line))


def _line_dish(rest: str, titles: dict[str, str] | None) -> str | None:
    """The dish a ranked line names first: before any colon explanation."""
    head = re.split(r"\s[-–—]\s|:|\|", rest.strip().strip("|").strip(), maxsplit=1)[0]
    return letter_of(head, titles) or letter_of(rest, titles)


def _table_ranking(text: str, titles: dict[str, str] | None) -> list[str]:
    """Markdown table rows with a rank number cell and a dish cell, in rank order."""
    rows = []
    for line in text.split("\n"):
        if line.count("|") < 2:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        ranks = [int(m.group(1)) for c in cells
                 for m in [re.fullmatch(r"#?([1-4])(?:st|nd|rd|th)?\.?", plain(c).strip())] if m]
        dishes = [d for c in cells if not re.fullmatch(r"#?[1-4](?:st|nd|rd|th)?\.?",
                                                         plain(c).strip())
                  for d in [letter_of(c, titles)] if d]
        if ranks and dishes:
            rows.append((ranks[0], dishes[0]))
    rows.sort(key=lambda pair: pair[0])
    return list(dict.fromkeys(letter for _, letter in rows))


def _inline_ordinals(text: str, titles: dict[str, str] | None) -> list[str]:
    pairs = []
    for match in _INLINE_ORDINAL.finditer(plain(text)):
        if match.group(3):  # "1) D 2) C"
            number, entry = int(match.group(3)), match.group(4)
        else:
            word = " ".join(match.group(1).lower().replace("no.", "#").replace("-", " ").split())
            number = int(word[-1]) if word.startswith("#") else _ORDINAL_WORDS[word]
            entry = match.group(2)
        letter = letter_of(entry, titles)
        if letter:
            pairs.append((number, letter))
    if len(pairs) < 2:
        return []
    return list(dict.fromkeys(letter for _, letter in sorted(pairs, key=lambda p: p[0])))


_NOT_ORDERED = re.compile(r"(?:\bnot|n't|\bnever|\bcannot)\s+(?:\w+\s+){0,2}?(?:rank|order|place"
                          r"|compare|choose)\w*", re.I)


def _sequence_ranking(text: str, titles: dict[str, str] | None) -> list[str]:
    """The last run of dishes joined by ">", arrows, commas or "then" that places at least
    two dishes; a sequence of four wins over shorter ones."""
    found_runs: list[list[str]] = []
    for line in plain(text).split("\n"):
        for segment in re.split(r"(?<=[.!?])\s+|:\s*", line):
            if _NOT_ORDERED.search(segment):
                continue  # "I wouldn't rank B and D"
            letters = _run_letters(segment, titles)
            if len(letters) >= 2:
                found_runs.append(letters)
    full = [run for run in found_runs if len(run) == len(LETTERS)]
    return (full or found_runs or [[]])[-1]


# Words that place a dish rather than describe it ("my top pick is C", "followed by A").
_FILLER = frozenset({"my", "the", "a", "top", "pick", "is", "first", "choice", "best", "then",
                    "followed", "by", "i", "d", "ll", "would", "be", "choose", "go", "next",
                    "last", "finally", "and", "most", "least", "suitable", "worst", "place",
                    "comes"})


def _short_reference(item: str, titles: dict[str, str] | None) -> str | None:
    """The dish a sequence entry names, when the entry is only that reference (a letter,
    "Dish B", a title) with at most three more words outside brackets, besides words that
    place it ("my top pick is C"): "Dish A is served with maple syrup" is a sentence, not an
    entry."""
    bare = _title_words(re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", plain(item)))
    letter = letter_of(item, titles)
    if letter is None:
        return None
    title = _title_words((titles or {}).get(letter, ""))
    rest = bare.replace(title, " ", 1) if title and title in bare else re.sub(
        r"\b(?:dish|option|recipe|meal|choice)\b|(?<![\w'])[a-d](?![\w'])", " ", bare, count=2)
    return letter if len([w for w in rest.split() if w not in _FILLER]) <= 3 else None


def _run_letters(segment: str, titles: dict[str, str] | None) -> list[str]:
    items = _sequence_items(re.sub(r"\s+and\s+(?=\S)", ", ", segment))
    if len(items) < 2:
        return []
    letters = [_short_reference(item, titles) for item in items]
    if any(letter is None for letter in letters):
        return []
    return list(dict.fromkeys(letters))  # type: ignore[arg-type]


def _marked_ranking(text: str, titles: dict[str, str] | None) -> list[str]:
    """What follows the last "Ranking:" / "Final order:" label, on its line or in the lines
    after it."""
    cleaned = plain(text)
    labels = list(_RANK_LABEL.finditer(cleaned))
    for label in reversed(labels):
        rest = label.group(1)
        letters = _run_letters(rest, titles) or ranking_letters(rest.strip(), None) \
            if rest.strip() else []
        if len(letters) >= 2:
            return letters
        if not rest.strip():
            after = cleaned[label.end():]
            letters = _numbered_ranking(after, titles) or _sequence_ranking(after, titles)
            if letters:
                return letters
    return []


def _best_only(text: str, titles: dict[str, str] | None) -> list[str]:
    for clause in committed_clauses(text):
        match = _BEST_ONLY.search(clause)
        letter = letter_of(match.group(1), titles) if match else None
        if letter:
            return [letter]
    return []


_ORDER_CUE = re.compile(r"\b(?:then|followed\s+by|next|first|last|best|worst|top|bottom"
                        r"|most\s+suitable|least\s+suitable)\b", re.I)
_SEQUENCE_CUE = re.compile(r"\b(?:followed\s+by|then|after\s+that)\b", re.I)
_WORST_MARK = re.compile(r"\b(?:worst|least\s+suitable|bottom)\b[^\w]*$", re.I)


# Words that may follow a dish letter ("A and C tie", "B comes next"); another lower-case word
# after "A" makes it the article ("A good option").
_AFTER_LETTER = (r"(?:and|or|is|are|comes|ranks|then|first|second|third|last|would|should|has"
                 r"|edges|beats|ties?|tied|followed|over|before|after|next|vs)\b")


def _mentions(sentence: str, titles: dict[str, str] | None) -> list[tuple[int, int, str]]:
    """(start, end, letter) of each strict dish reference in a sentence: "Option C",
    "Dish B", "(D)", a capital letter standing alone (not the article "A"), a full title."""
    found = []
    for match in re.finditer(r"\b(?:dish|option|recipe|meal)\s+([A-D])\b|\(([A-D])\)"
                             r"|(?<![\w'’-])([A-D])(?![\w'’-])(?!\s+(?!" + _AFTER_LETTER +
                             r")[a-z])", sentence, re.I):
        letter = next(g for g in match.groups() if g)
        if match.group(3) and not letter.isupper():
            continue
        found.append((match.start(), match.end(), letter.upper()))
    lowered = sentence.lower().replace("&", "and")
    for letter, title in (titles or {}).items():
        words = title.lower().replace("&", "and").strip()
        position = lowered.find(words) if words else -1
        if position >= 0:
            found.append((position, position + len(words), letter))
    return sorted(found)


def _ordered_mentions(text: str, titles: dict[str, str] | None) -> list[str]:
    """One sentence that orders three or more dishes in words ("I'd go with Option C first,
    then Option A, Option B, and Option D last"; "Best: X, then Y, Z, worst: W"): the dishes
    in the order named, one marked worst or last moved to the end."""
    units = list(reversed(committed_clauses(text)))
    whole = " ".join(reversed(units))
    if len(_ORDER_CUE.findall(whole)) >= 2:
        units.append(whole)  # "A and C tie for first ... B comes next, and D is the least"
    for clause in units:
        if not _ORDER_CUE.search(clause):
            continue
        mentions = _mentions(clause, titles)
        letters = list(dict.fromkeys(letter for _, _, letter in mentions))
        needed = 2 if _SEQUENCE_CUE.search(clause) else 3
        if len(letters) < needed:
            continue
        for start, end, letter in mentions:
            marked = _WORST_MARK.search(clause[max(0, start - 14):start]) or re.match(
                r"[\s(]*(?:last|worst)\b", clause[end:end + 10], re.I)
            if marked and letters[-1] != letter:
                letters.remove(letter)
                letters.append(letter)
                break
        return letters
    return []


_RANK_RULES = (("json", _json_ranking), ("marker", _marked_ranking),
               ("numbered", _numbered_ranking), ("ordinals", _inline_ordinals),
               ("sequence", _sequence_ranking), ("ordered_mentions", _ordered_mentions),
               ("best_only", _best_only))


_QA_ANSWER = re.compile(r"^[ \t]*A[ \t]*:[ \t]*", re.M)
_REVERSED = re.compile(r"\b(?:least|worst|lowest)(?:\s+suitable)?\s+(?:\w+\s+){0,2}?to\s+"
                       r"(?:the\s+)?(?:most|best|highest)\b|\bascending\s+order\s+of\s+"
                       r"suitability\b|\bbottom\s+to\s+top\b", re.I)


def read_rank(text: str, titles: dict[str, str] | None = None) -> Reading:
    """:func:`_read_rank`, with "A:" after a "Q:" line read as the answer's marker and a
    ranking given from least to most suitable turned round."""
    if re.search(r"^[ \t]*Q[ \t]*:", text, re.M):
        text = _QA_ANSWER.sub("", text)
    reading = _read_rank(text, titles)
    if reading.ok and _REVERSED.search(text):
        return found({"ranking": reading.value["ranking"][::-1]}, f"{reading.rule}_reversed")
    return reading


def _read_rank(text: str, titles: dict[str, str] | None = None) -> Reading:
    """A ranking final answer by the first rule that places a dish (:data:`_RANK_RULES`):
    JSON (the last object's ``ranking`` or a bare array), a "Ranking:" label, a numbered or
    table list, ordinals, a sequence (``A > C > B > D``, arrows, commas), the best dish alone.
    Ties keep the order written; a dish named twice keeps its first place; a partial ranking
    lists only the dishes placed (the scorer completes it)."""
    for name, rule in _RANK_RULES:
        letters = rule(text, titles)
        if letters and name == "sequence" and len(letters) < len(LETTERS):
            # a short run inside a ranking written in words: the longer reading wins
            worded = _ordered_mentions(text, titles)
            if len(worded) > len(letters):
                return found({"ranking": worded}, "ordered_mentions")
        if letters:
            return found({"ranking": letters}, name)
    field = _RANKING_FIELD.search(text)
    if field:
        letters = ranking_letters(re.findall(r'"([^"]*)"', field.group(1)), titles)
        if letters:
            return found({"ranking": letters}, "json_field")
    return missing()


def read_rank_output(text: str | None, titles: dict[str, str] | None = None,
                     reasoning: str | None = None, finish_reason: str | None = None) -> Reading:
    """One ranking output as a grader reads it (reasoning apart, cut-off refused)."""
    return read_output(text, lambda final: read_rank(final, titles), reasoning, finish_reason)


def parse_rank(text: str, titles: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """({"ranking"}, parse_mode) from a ranking answer."""
    reading = read_rank_output(text, titles)
    return rank_value(reading), parse_mode(reading)
