"""NGQA prompt assembly (paper Figure 7 paradigm) and answer parsing.

User prompt = question + method prompt + textualised graph + task note. The method prompts and
notes are quoted from the case studies (Tables 12-18); the fixed system prompt is ours (the
paper's Figure 7 is an image that the text does not reproduce).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from nutrireason.methods.reading import (
    Reading,
    boxed,
    committed_clauses,
    found,
    is_hedge,
    json_values,
    last_object_with,
    missing,
    opens_with_hedge,
    plain,
    read_output,
)
from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.ngqa.questions import order_tags
from nutrireason.schema import answer_kind, task_spec
from nutrireason.standards import load_standards

Triple = tuple[str, str, str]

SYSTEM_PROMPT = (
    "You are a nutrition assistant. You judge whether a food suits a user's health, using the "
    "food's nutrient tags and the user's health conditions, diets and habits as given.")

BASE_METHOD_PROMPT = (
    "Below are the extra information you use to answer the question, note that you should not "
    "use your general knowledge and the answer is among this information.")

COT_ZERO_PROMPT = (
    "Let’s think step by step to determine the healthiness of the food, by extracting the "
    "nutritional properties of the food from the given graph, then comparing them to the "
    "nutrition requirements of the health status, dietary need and habits of the user. A food "
    "is unhealthy only if it has certain properties that are unsuitable to the user’s health "
    "and diet. Do not be too strict with your criteria, only focus on a few main nutritional "
    "tags that strongly indicate its healthiness or unhealthiness to the particular diet or "
    "health status the user has. Some nutritional tags might not be as important in "
    "determining healthiness.")

COT_BAG_PROMPT = (
    "You will be given the textual description of a directed graph. Let’s first construct a "
    "graph with the given nodes and edges. Then determine the healthiness of the food by "
    "traversing the graph and determining the nutritional properties of the food, then compare "
    "them to the health status, dietary need and habits of the user. Do not be too strict with "
    "your criteria, only focus on a few main nutritional tags that strongly indicate its "
    "healthiness or unhealthiness to the particular diet or health status the user has. Some "
    "nutritional tags might not be as important in determining healthiness.")

TOG_PROMPT = "You will be given the textual description of a directed graph."

def triples_text(triples: list[Triple]) -> str:
    """Plain textualisation: ``(head relation tail), ...``."""
    return ", ".join(f"({h} {r} {t})" for h, r, t in triples)


def edge_list_text(triples: list[Triple]) -> str:
    """CoT-BAG textualisation: the graph as a list of attributed edges."""
    edges = ", ".join(f'an edge between node "{h}" and "{t}" with attribute "{r}"'
                      for h, r, t in triples)
    return f"Here is the description of the graph: This is the list of edges: {edges}."


def prompt_note(task: str) -> str:
    """The note a task's prompts end with (its spec's ``prompt_note``)."""
    spec = task_spec(task)
    return spec.prompt_note if spec else ""


def user_prompt(question: str, method_prompt: str, graph_text: str, task: str) -> str:
    """Question, method prompt, textualised graph and task note, in the paper's order."""
    parts = (question, method_prompt, graph_text, prompt_note(task))
    return " ".join(part for part in parts if part)


# ------------------------------------------------------------------------------- parsing
#
# A model's output may hold reasoning besides the answer, and the reasoning names the user's
# diets, conditions and habits in the tags' own words ("Low salt/Low sodium diet", "Eats high
# protein diet", "a low-carb diet"). So the parsers first find the answer part of the output,
# and they never read a tag inside such a name or inside a phrase about what the user needs.

NUTRIENT_WORDS = {
    "carb": "carb", "carbs": "carb", "carbohydrate": "carb", "carbohydrates": "carb",
    "sugar": "sugar", "sugars": "sugar", "sodium": "sodium", "salt": "sodium",
    "cholesterol": "cholesterol", "saturated fat": "saturated_fat",
    "saturated fats": "saturated_fat",
    "calorie": "calorie", "calories": "calorie", "protein": "protein", "proteins": "protein",
}
_NUTRIENT = "|".join(sorted((re.escape(w).replace("\\ ", "[ _-]") for w in NUTRIENT_WORDS),
                            key=len, reverse=True))
TAG_PATTERN = re.compile(rf"\b(low|high)(?:[\s_-]+in)?[\s_-]+({_NUTRIENT})\b", re.I)
VERDICT_PATTERN = re.compile(r"\b(yes|no)\b", re.I)

_TAG = rf"\b(?:low|high)(?:[\s_-]+in)?[\s_-]+(?:{_NUTRIENT})\b"
_TAG_TOKEN = re.compile(rf"\s*{_TAG}\s*", re.I)
# "Answer:", "Final answer:", "The answer is:", "**Answer**", "- Answer:" anywhere; "Output:"
# and "Tags:" only at the start of a line, where they head the answer rather than a remark.
_MARKER_SOURCE = (
    r"(?:\b(?:final\s+)?answer(?:\s+is)?"
    r"|^[ \t>#*-]*(?:\*\*)?[ \t]*(?:output|(?:(?:nutrient|food|food's|the\s+food's)\s+)?tags))"
    r"[ \t]*(?:\*\*[ \t]*:?|:(?:[ \t]*\*\*)?)")
_MARKER = re.compile(_MARKER_SOURCE, re.I | re.M)
_REASONING_LABEL = re.compile(r"\b(?:reasoning|explanation|rationale)\s*\**\s*:", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•+>]|\d+[.)])\s+")
_ITEM_SPLIT = re.compile(r"[,;&]|\band\b", re.I)
_ITEM_STRIP = " \t*`'\"‘’“”[](){}.!:-•"
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
# A Yes/No that opens a sentence: at a line start, after a sentence end or after a marker.
_VERDICT_START = re.compile(
    rf"(?:^|(?<=[.!?:])[ \t]+|(?P<marker>{_MARKER_SOURCE}))[ \t>#*-]*(?:\*\*)?[ \t]*"
    r"(?P<verdict>yes|no)\b(?=\**\s*(?:[,.;:!—–-]|because\b|$))", re.I | re.M)
_BARE_VERDICT = re.compile(r"\W*(?:yes|no)\W*", re.I)
# Phrases about the user, not the food: "low-carb diet", "low sodium intake", "high protein
# requirement", "needs low sugar", "a diet low in calories", and negations ("not high in sugar").
# Also the note's own example output, when the model echoes the note back.
_TAGS = rf"{_TAG}(?:\s*(?:,|&|/|\band\b|\bor\b)\s*{_TAG})*"  # "low sugar and low carb"
_USER_PHRASES = [re.compile(source, re.I | re.M) for source in (
    rf"{_TAGS}[\s_-]+(?:diets?|dietary|intakes?|requirements?|needs?|restrictions?|plans?"
    r"|regimens?|goals?)\b",
    rf"\b(?:needs?|needing|requires?|required|requiring|wants?|prefers?)\s+"
    rf"(?:(?:a|an|the|to|eat|have|foods?)\s+)*{_TAGS}",
    rf"\bdiets?\s+(?:(?:that|which)\s+)?(?:is\s+)?{_TAG}",
    rf"\b(?:user(?:'s)?\s+)?(?:needs?|requirements?|requires|diets?|goals?)\s*:\s*{_TAGS}",
    r"^[ \t>*-]*(?:the\s+)?user(?:'s)?\s+(?:needs?|requirements?|diets?|conditions?|profile)"
    r"\s*:[^\n]*",
    rf"(?:\bnot|\bnever|\bnor|n't)\s+(?:(?:very|too|particularly|especially|that|so|overly"
    rf"|really)\s+)?{_TAG}",
    r"\bfor\s+example,?\s+the\s+output\s+is:?[^\n]*?(?:[.!?](?=\s|$)|$)")]
# Habit names such as "Eats little or no fish" or ingredients "no added fat" hold a "no".
_NOT_A_VERDICT = re.compile(r"\b(?:(?:little|few)\s+(?:or|to)\s+no|no\s+added)\b", re.I)


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: the value scored, and whether parsing found one."""

    value: object
    ok: bool


@lru_cache(maxsize=1)
def _name_patterns() -> tuple[re.Pattern[str], ...]:
    """Condition, diet and habit node names, read from the standards. A slashed diet name
    ("Low salt/Low sodium diet") also matches without its final "diet"."""
    standards = load_standards()
    names = [c.node_name for c in standards.conditions.conditions]
    names += [phrase for item in standards.habits.items for phrase in _habit_names(item)]
    patterns = [_name_pattern(name) for name in names]
    patterns += [_name_pattern(name.rsplit(" ", 1)[0]) for name in names
                 if "/" in name and name.lower().endswith(" diet")]
    return tuple(patterns)


def _habit_names(item: object) -> list[str]:
    """A habit item's tag names: its ``high`` and ``low`` names and any per-code names."""
    codes = getattr(item, "codes", None) or {}
    names = [getattr(item, "high", None), getattr(item, "low", None), *codes.values()]
    return [name for name in names if isinstance(name, str) and name]


def _name_pattern(name: str) -> re.Pattern[str]:
    words = re.findall(r"[a-z0-9]+", name.lower())
    return re.compile(r"\b" + r"[\s/_-]+".join(words) + r"\b", re.I)


def _blank(match: re.Match[str]) -> str:
    return "~" * len(match.group(0))


def mask_user_phrases(text: str) -> str:
    """``text`` with diet, condition and habit names and phrases about the user's needs
    overwritten by ``~`` (same length), so that no tag is read inside them."""
    for pattern in (*_name_patterns(), *_USER_PHRASES):
        text = pattern.sub(_blank, text)
    return text


def _nutrient(word: str) -> str:
    return NUTRIENT_WORDS[re.sub(r"[\s_-]+", " ", word.lower())]


def _tags_in(text: str) -> list[str]:
    tags = [f"{direction.lower()}_{_nutrient(word)}"
            for direction, word in TAG_PATTERN.findall(mask_user_phrases(text))]
    return order_tags(tags, load_ngqa_config())


def _is_tag_list(line: str) -> bool:
    """True when the line is only tags: "high_sodium, low_carb", "1. **Low in sugar**",
    '["high_sodium"]'."""
    items = [item.strip(_ITEM_STRIP) for item in _ITEM_SPLIT.split(_BULLET.sub("", line))]
    items = [item for item in items if item]
    return bool(items) and all(_TAG_TOKEN.fullmatch(item) for item in items)


def _is_list_line(line: str) -> bool:
    """A bullet or numbered item ("- high_sodium (hypertension)"), or a tag list."""
    return bool(_BULLET.match(line)) or _is_tag_list(line)


def _list_at(lines: list[str], start: int) -> str:
    """The run of list lines from ``start`` (or that line alone if it is not one)."""
    end = start + 1
    while _is_list_line(lines[start]) and end < len(lines) and _is_list_line(lines[end]):
        end += 1
    return "\n".join(lines[start:end])


def _after_marker(text: str) -> str | None:
    """Rule (a): what follows the last answer marker, to the end of its line or list."""
    markers = list(_MARKER.finditer(text))
    if not markers:
        return None
    first, _, rest = text[markers[-1].end():].partition("\n")
    first = _REASONING_LABEL.split(first)[0]
    if first.strip(_ITEM_STRIP):
        return first
    lines = rest.split("\n")
    filled = [k for k, line in enumerate(lines) if line.strip(_ITEM_STRIP)]
    return _list_at(lines, filled[0]) if filled else ""


def _last_tag_list(text: str) -> str | None:
    """Rule (b): the last run of lines made of tags only."""
    lines = text.split("\n")
    ends = [k for k, line in enumerate(lines) if _is_tag_list(line)]
    if not ends:
        return None
    start = ends[-1]
    while start > 0 and _is_tag_list(lines[start - 1]):
        start -= 1
    return "\n".join(lines[start:ends[-1] + 1])


def _leading_tag_list(text: str) -> str | None:
    """Rule (c): the output opens with a list of tags and goes on with reasoning on the same
    line ("high_carb, low_protein. The food ...")."""
    head = _SENTENCE_END.split(text.strip().split("\n", 1)[0], maxsplit=1)[0]
    return head if _is_tag_list(head) else None


def _sentence_at(text: str, start: int) -> str:
    """The sentence opening at ``start``, within its line; a bare "No." takes the next one."""
    line = text[start:].split("\n", 1)[0]
    ends = [m.end() for m in _SENTENCE_END.finditer(line)] + [len(line)]
    if _BARE_VERDICT.fullmatch(line[:ends[0]]) and len(ends) > 1:
        return line[:ends[1]]
    return line[:ends[0]]


def answer_sentence(text: str) -> str | None:
    """The sentence that opens with Yes or No: the one after the last answer marker, else the
    last one; markdown bold and extra spaces removed. None if no sentence opens so."""
    starts = list(_VERDICT_START.finditer(text))
    if not starts:
        return None
    marked = [m for m in starts if m.group("marker")]
    chosen = (marked or starts)[-1]
    sentence = _sentence_at(text, chosen.start("verdict"))
    return " ".join(sentence.replace("**", "").split())


_CONCLUSION_LINE = re.compile(
    r"^[ \t>*-]*(?:so|therefore|thus|hence|overall|in\s+conclusion|in\s+summary|finally|final"
    r"|conclusion)\b[^\n]*$", re.I | re.M)


def _concluding_line(text: str) -> str | None:
    """Rule (a'): the last line that concludes ("So the food is: high_sodium, low_protein")
    when it names tags."""
    lines = [m.group(0) for m in _CONCLUSION_LINE.finditer(text) if _tags_in(m.group(0))]
    return lines[-1] if lines else None


def _answer_part(text: str) -> tuple[str, str]:
    """(the part of a multi-label output that holds the answer, the rule that found it)."""
    for name, rule in (("marker", _after_marker), ("conclusion", _concluding_line),
                       ("tag_list", _last_tag_list), ("leading_list", _leading_tag_list)):
        part = rule(text)
        if part is not None:
            return part, name
    sentence = answer_sentence(text)
    if sentence and _tags_in(sentence):
        return sentence, "answer_sentence"
    return text, "whole_text"


def answer_part(text: str) -> str:
    """The part of a multi-label output that holds the answer, by the first rule that applies:
    (a) after the last answer marker; (b) the last line (or run of lines) made of tags only;
    (c) a tag list that opens the output; (d) the Yes/No answer sentence, if it names a tag;
    else the whole text."""
    return _answer_part(text)[0]


def parse_tags(text: str) -> list[str]:
    """The ``low_x`` / ``high_x`` tags of the answer part ("low in carb", "high saturated fat",
    "Low-Sodium"), once each, in the gold answers' order. Diet, condition and habit names and
    phrases about the user's needs are never read as tags."""
    return _tags_in(answer_part(text))


def parse_verdict(text: str) -> str | None:
    """Yes/No of a final answer (:func:`read_binary`), or None."""
    reading = read_binary(text)
    return reading.value if reading.ok else None


# ------------------------------------------------------------------ rules, one per form

_JSON_ANSWER_KEYS = ("final_answer", "answer", "verdict", "is_healthy", "healthy", "decision",
                     "response", "output", "result")
_JSON_TAG_KEYS = ("tags", "nutrient_tags", "labels", "nutrients", "answer", "final_answer",
                  "output", "result")
_ECHO = re.compile(r"\byes\s*(?:or|/|\|)\s*no\b|\bno\s*(?:or|/|\|)\s*yes\b", re.I)
_LEADING_VERDICT = re.compile(r"^[\W_]*(yes|no)\b(?![\w-])", re.I)
# Spoken verdicts at a clause's start: "Nope.", "Yep, ...", "Absolutely not."
_SPOKEN = re.compile(r"^[\W_]*(?:(?P<no>nope|nah|no\s+way|absolutely\s+not|definitely\s+not"
                     r"|certainly\s+not|not\s+at\s+all)|(?P<yes>yep|yup|yeah|absolutely"
                     r"|definitely|certainly|sure))\b(?![\w-])", re.I)
_BARE_LINE = re.compile(r"^[\W_]*(yes|no)[\W_]*$", re.I)
_MARKED_VERDICT = re.compile(
    r"(?:\b(?:final\s+)?(?:answer|verdict|conclusion|decision|output)\b(?:\s+is)?|"
    r"\bmy\s+answer\s+is)\s*[:=\-\u2013\u2014]?\s*\W{0,3}(yes|no)\b", re.I)
_HEALTHY = re.compile(
    r"\b(?:is|it's|are|be|remains|seems|appears)\s+(not\s+|n't\s+)?(?:a\s+|an\s+)?"
    r"(?:very\s+|particularly\s+|generally\s+)?(healthy|suitable|good|appropriate|unhealthy"
    r"|unsuitable|inappropriate|bad|poor)\b|\b(isn't|aren't|not)\s+(?:a\s+)?(?:very\s+)?"
    r"(healthy|suitable|good|appropriate)\b", re.I)


def _verdict_word(value: object) -> str | None:
    """Yes/No from a JSON value: a bool, or a string whose first word is yes/no."""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, str):
        first = _LEADING_VERDICT.match(plain(value).strip())
        if first:
            return first.group(1).capitalize()
    return None


def _json_verdict(text: str) -> str | None:
    hit = last_object_with(text, _JSON_ANSWER_KEYS)
    return _verdict_word(hit[0][hit[1]]) if hit else None


def _marked_verdict(text: str) -> str | None:
    """The verdict after the last answer marker ("Final answer: No", "the answer is **Yes**",
    "## Answer\\nNo")."""
    cleaned = _ECHO.sub(" ", plain(text))
    marked = list(_MARKED_VERDICT.finditer(cleaned))
    if marked:
        return marked[-1].group(1).capitalize()
    heading = list(re.finditer(r"(?:^|\n)[ \t]*(?:final\s+)?answer[ \t]*:?[ \t]*\n+[ \t]*"
                               r"\W{0,3}(yes|no)\b", cleaned, re.I))
    return heading[-1].group(1).capitalize() if heading else None


def _first_clause_verdict(text: str) -> str | None:
    """Yes/No opening the first clause that neither declines nor hedges (answer first, then
    caveats), or a line that is only Yes/No at the end of the text."""
    lines = [line for line in plain(text).split("\n") if line.strip()]
    if lines and _BARE_LINE.match(lines[-1]):
        return _BARE_LINE.match(lines[-1]).group(1).capitalize()  # type: ignore[union-attr]
    kept = committed_clauses(_ECHO.sub(" ", text))
    for clause in kept[:1]:
        first = _LEADING_VERDICT.match(clause)
        if first:
            return first.group(1).capitalize()
        spoken = _SPOKEN.match(clause)
        if spoken:
            return "No" if spoken.group("no") else "Yes"
    for clause in kept:
        first = _LEADING_VERDICT.match(clause)
        if first and _NOT_A_VERDICT.search(clause) is None:
            return first.group(1).capitalize()
    return None


def _healthy_phrase(text: str) -> str | None:
    """ "is not healthy", "is a suitable choice", "isn't good" in the first clause that says
    so."""
    for clause in committed_clauses(text):
        phrase = _HEALTHY.search(mask_user_phrases(clause))
        if phrase is None:
            continue
        negated = bool(phrase.group(1) or phrase.group(3))
        # "I would not say it is healthy", "I don't think it's a good choice"
        negated ^= bool(re.search(r"\b(?:not|never|hardly)\b|n't\b", clause[:phrase.start()],
                                  re.I))
        word = (phrase.group(2) or phrase.group(4)).lower()
        positive = word in ("healthy", "suitable", "good", "appropriate")
        return "Yes" if positive != negated else "No"
    return None


def _last_word_verdict(text: str) -> str | None:
    """The last yes/no said outside hedges, refusals, echoes of the choice and habit names."""
    words = VERDICT_PATTERN.findall(
        _NOT_A_VERDICT.sub(_blank, _ECHO.sub(" ", " ".join(committed_clauses(text)))))
    return words[-1].capitalize() if words else None


def _advice_verdict(text: str) -> str | None:
    """Advice about the food read as the verdict: "steer clear", "I'd avoid it", "not
    recommended" are No; "recommended", "fine once in a while" are Yes."""
    from nutrireason.methods.fam_prompts import NOT_REC, prose_decision

    decision = prose_decision(mask_user_phrases(text))
    return None if decision is None else "No" if decision == NOT_REC else "Yes"


_BINARY_RULES = (("json", _json_verdict), ("boxed", lambda t: _verdict_word(boxed(t) or "")),
                 ("marker", _marked_verdict), ("verdict_first", _first_clause_verdict),
                 ("healthy_phrase", _healthy_phrase), ("last_word", _last_word_verdict),
                 ("advice_words", _advice_verdict))


_ECHOED_NOTE = re.compile(r"Important\s+Note\s*:[^\n]*|For\s+example,?\s+the\s+output\s+is:?[^\n]*?"
                          r"(?:[.!?](?=\s|$)|$)", re.I)


def without_echo(text: str) -> str:
    """``text`` without the task note or its example echoed back (instructions, not answers)."""
    return _ECHOED_NOTE.sub(" ", text)


def _two_sided(text: str) -> bool:
    """The answer gives both verdicts and says it hedges ("Both yes and no: yes, because
    ...; no, because ...")."""
    cleaned = plain(text)
    verdicts = {m.group("verdict").lower() for m in _VERDICT_START.finditer(cleaned)}
    verdicts |= {m.lower() for m in re.findall(r"\b(yes|no)\b,?\s+because\b", cleaned, re.I)}
    return verdicts == {"yes", "no"} and is_hedge(cleaned) and not _marked_verdict(text)


def read_binary(text: str) -> Reading:
    """Yes/No of a final answer by the first rule that finds one (JSON, ``\\boxed{}``, an
    answer marker, a leading Yes/No, "is (not) healthy", the last yes/no said); an answer
    that gives both verdicts and hedges is a hedge."""
    if _two_sided(text):
        return missing("hedge")
    text = without_echo(text)
    hedged = opens_with_hedge(text)
    for name, rule in _BINARY_RULES:
        if hedged and name not in ("json", "boxed", "marker"):
            return missing("hedge")
        verdict = rule(text)
        if verdict is not None:
            return found(verdict, name)
    return missing()


def _json_tags(text: str) -> list[str] | None:
    values = json_values(text)
    if values and isinstance(values[-1], list) and all(isinstance(v, str) for v in values[-1]):
        return _tags_in(", ".join(values[-1]))
    hit = last_object_with(text, _JSON_TAG_KEYS)
    if hit is None:
        return None
    value = hit[0][hit[1]]
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    return _tags_in(str(value)) if isinstance(value, str) else None


_CELL_PAIR = re.compile(rf"^[\s|*\-•\d.)]*({_NUTRIENT})\W+(?:\w+\W+){{0,3}}?(high|low)\b",
                        re.I | re.M)


# "sodium (high), protein (low)", "sodium: high; protein: low"
_INLINE_PAIR = re.compile(rf"\b({_NUTRIENT})[ \t]*(?:\(|:|=|-|–)[ \t]*(high|low)\b", re.I)


def _paired_tags(text: str) -> list[str]:
    """Tags written as a nutrient then its level: table rows ("| Sodium | High |") and
    label lines ("Sodium: high"). A table with a yes/no column ("Connects to user?") keeps
    only the rows marked yes."""
    rows = [line for line in text.split("\n") if line.count("|") >= 2]
    marked = [row for row in rows if _yes_no_cell(row) is not None]
    if marked:
        text = "\n".join(row for row in marked if _yes_no_cell(row) == "yes")
    masked = mask_user_phrases(text)
    pairs = _CELL_PAIR.findall(masked) + _INLINE_PAIR.findall(masked)
    found_tags = [f"{level.lower()}_{_nutrient(word)}" for word, level in pairs]
    return order_tags(list(dict.fromkeys(found_tags)), load_ngqa_config())


def _yes_no_cell(row: str) -> str | None:
    """ "yes" or "no" when a cell of the table row opens with it, else None."""
    for cell in row.strip().strip("|").split("|"):
        first = re.match(r"^\W*(yes|no)\b", cell.strip(), re.I)
        if first:
            return first.group(1).lower()
    return None


def read_tags(text: str) -> Reading:
    """The food's tags in a final answer: JSON, then the answer part's tags, then tags written
    as nutrient and level (tables)."""
    tags = _json_tags(text)
    if tags:
        return found(tags, "json")
    cleaned = plain(without_echo(text))
    part, rule = _answer_part(cleaned)
    tags = _tags_in(part) if rule != "whole_text" else []
    if tags:
        return found(tags, rule)
    if rule == "marker":  # "Output:" then "sodium: high" lines; "Answer: None" is no tags
        paired = _paired_tags(cleaned[list(_MARKER.finditer(cleaned))[-1].end():])
        return found(paired, "marker") if paired else Reading([], False, "none", "no_answer")
    paired = _paired_tags(cleaned)
    if paired:
        return found(paired, "table")
    tags = _tags_in(" ".join(committed_clauses(cleaned)))
    return found(tags, "whole_text") if tags else Reading([], False, "none", "no_answer")


def _json_sentence(text: str) -> str | None:
    hit = last_object_with(text, _JSON_ANSWER_KEYS + ("text",))
    value = hit[0][hit[1]] if hit else None
    return value if isinstance(value, str) and _verdict_word(value) else None


def _listed_tags(text: str) -> list[str]:
    """Tags written on list lines or table rows ("- high in sodium", "| No | high in sodium |"),
    in the order written, as the model words them ("high in saturated fat")."""
    lines = [line for line in text.split("\n")
             if _BULLET.match(line) or line.strip().startswith("|") or _is_tag_list(line)]
    found_tags = TAG_PATTERN.findall(mask_user_phrases("\n".join(lines)))
    named = [f"{direction.lower()} in {_spaced(word)}" for direction, word in found_tags]
    return list(dict.fromkeys(named))


def _spaced(word: str) -> str:
    return " ".join(re.split(r"[\s_-]+", word.lower()))


def composed_sentence(verdict: str, reasons: list[str]) -> str:
    """The answer in the task's own words from a verdict and its listed reasons: "No, because
    the food is high in sodium, low in protein."."""
    return f"{verdict}, because the food is {', '.join(reasons)}."


def read_sentence(text: str) -> Reading:
    """Text generation: the Yes/No answer sentence (the last one giving its reasons with
    "because", else the first), JSON's answer string, else the whole final answer when a
    verdict can be read from it. A verdict whose reasons are a list or a table ("No, because
    the food is:" then bullets; "Verdict: Yes / Reasons: 1. low in carb") is read as the
    sentence they make (:func:`composed_sentence`)."""
    in_json = _json_sentence(text)
    if in_json is not None:
        return found(" ".join(plain(in_json).split()), "json")
    text = without_echo(text)
    if _two_sided(text):
        return Reading(" ".join(plain(text).split()), False, "none", "hedge")
    cleaned = plain(text)
    starts = [m for m in _VERDICT_START.finditer(cleaned)
              if not is_hedge(_sentence_at(cleaned, m.start("verdict")))]
    chosen = [(" ".join(_sentence_at(cleaned, m.start("verdict")).split()), m) for m in starts]
    because = [pair for pair in chosen if re.search(r"\bbecause\b", pair[0], re.I)]
    if because or chosen:
        sentence, match = because[-1] if because else chosen[0]
        if _tags_in(sentence):
            return found(sentence, "because_sentence" if because else "verdict_sentence")
        listed = _listed_tags(cleaned[match.start("verdict"):])
        if listed:
            return found(composed_sentence(match.group("verdict").capitalize(), listed),
                         "listed_reasons")
        return found(sentence, "because_sentence" if because else "verdict_sentence")
    verdict = read_binary(text)
    whole = " ".join(cleaned.split())
    if not verdict.ok:
        return Reading(whole, False, "none", "no_answer")
    listed = _listed_tags(cleaned)
    if listed:
        return found(composed_sentence(verdict.value, listed), "listed_reasons")
    return found(whole, f"whole_text_{verdict.rule}")


# The final-answer readers by answer shape (schema.ANSWER_KINDS)
KIND_READERS = {"yes_no": read_binary, "tag_set": read_tags, "sentence": read_sentence}


def reader_for(task: str) -> Callable[[str], Reading]:
    """The final-answer reader of an NGQA task by its answer shape (a task of another shape
    is read as a sentence)."""
    return KIND_READERS.get(answer_kind(task) or "", read_sentence)


def read_answer(task: str, text: str | None, reasoning: str | None = None,
                finish_reason: str | None = None) -> Reading:
    """One NGQA output as a grader reads it: the reasoning set apart, a cut-off output
    ``truncated``, the final answer read by the task's rules (:data:`KIND_READERS`)."""
    return read_output(text, reader_for(task), reasoning, finish_reason)


def parse_answer(task: str, text: str) -> Parsed:
    """:func:`read_answer` as (value, ok) for callers that need no audit."""
    reading = read_answer(task, text)
    if answer_kind(task) == "tag_set" and reading.value is None:
        return Parsed([], False)
    return Parsed(reading.value, reading.ok)
