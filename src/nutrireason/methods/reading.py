"""How an answer is read: one layer between a model's output and every task parser.

:func:`read_output` separates the reasoning from the final answer
(:func:`nutrireason.reasoning.split_reasoning`), refuses cut-off output (``truncated``,
never parsed), hands the final answer to the task's parser and, when the parser finds no
committed answer, says why: ``refusal`` (the model declines), ``hedge`` (it depends, either
way) or ``no_answer``. The result is a :class:`Reading`: the value, whether it counts, the rule
that read it and the reason it does not count; methods put its :meth:`Reading.audit` in the
record's ``extra["reading"]``.

The helpers here are shared by the NGQA and FAM-Bench parsers: markdown clean-up, the JSON
values of a text (the last complete one wins), sentences and clauses, and the refusal and hedge
phrases.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from nutrireason.models.types import ModelResponse
from nutrireason.reasoning import Split, split_reasoning


@dataclass(frozen=True)
class Reading:
    """One answer as read: ``value`` is scored when ``ok``; ``rule`` names the rule that read
    it (or ``none``); ``reason`` says why an answer does not count; ``form`` is how the
    reasoning was separated (:mod:`nutrireason.reasoning`)."""

    value: Any
    ok: bool
    rule: str
    reason: str | None = None
    form: str = "plain"

    def audit(self) -> dict[str, Any]:
        """What a record keeps of the reading (``extra["reading"]``)."""
        return {"rule": self.rule, "reason": self.reason, "form": self.form}


def found(value: Any, rule: str) -> Reading:
    """A committed answer read by ``rule``."""
    return Reading(value, True, rule)


def missing(reason: str = "no_answer", rule: str = "none") -> Reading:
    """No answer that counts, and why."""
    return Reading(None, False, rule, reason)


Parser = Callable[[str], Reading]


def read_output(text: str | None, parser: Parser, reasoning: str | None = None,
                finish_reason: str | None = None) -> Reading:
    """Read one call's output with ``parser`` (a function of the final answer text)."""
    split = split_reasoning(text, reasoning, finish_reason)
    return read_split(split, parser)


def read_response(response: ModelResponse, parser: Parser) -> Reading:
    """:func:`read_output` on a backend's response."""
    return read_output(response.text, parser, response.reasoning, response.finish_reason)


def final_text(response: ModelResponse) -> str:
    """The final answer of a response ("" when it was cut off): for steps that read a
    response without a task parser (ToG's pruning and stop steps)."""
    split = split_reasoning(response.text, response.reasoning, response.finish_reason)
    return "" if split.truncated else split.final


# A small model that goes on after its answer invents the next turn: "Exercise 2:", "Question
# 3:", "### Instruction:", "User:". What follows is not its answer to this question.
_NEXT_TURN = re.compile(r"^[ \t#*]*(?:(?:exercise|question|example|problem|task)[ \t]*\d+"
                        r"[ \t]*[:.)]|(?:instruction|user|human|input)[ \t]*:)", re.I | re.M)


def own_answer(final: str) -> str:
    """The final answer without a turn the model invented after it."""
    for match in _NEXT_TURN.finditer(final):
        if final[:match.start()].strip():
            return final[:match.start()]
    return final


def read_split(split: Split, parser: Parser) -> Reading:
    if split.truncated:
        return Reading(None, False, "none", "truncated", split.form)
    final = own_answer(split.final)
    if not final.strip():
        return Reading(None, False, "none", "no_answer", split.form)
    reading = parser(final)
    if not reading.ok and reading.reason in (None, "no_answer"):
        reading = replace(reading, reason=declined(final) or "no_answer")
    return replace(reading, form=split.form)


def opens_with_hedge(text: str) -> bool:
    """The answer's first sentence opens with a hedge ("This dish could go either way."):
    what follows is weighing, not a committed answer, unless a conclusion or label says
    otherwise."""
    said = sentences(plain(text))
    parts = clauses(said[0]) if said else []
    concluded = any(CONCLUDING.match(c) for s in said for c in clauses(s))
    return bool(parts) and is_hedge(parts[0]) and not concluded


def parse_mode(reading: Reading) -> str:
    """The FAM-Bench ``parse_mode`` of a reading: json, fallback (any other rule) or failed."""
    return "failed" if not reading.ok else "json" if reading.rule == "json" else "fallback"


# ----------------------------------------------------------------------- markdown and JSON

_BOXED = re.compile(r"\\boxed\s*\{\s*(?:\\text(?:bf)?\s*\{)?([^{}]*)\}?\s*\}")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`+)")
_HEADING = re.compile(r"^[ \t]*#{1,6}(?:[ \t]+|$)", re.M)  # "#1 B" is a rank, not a heading
_QUOTE = re.compile(r"^[ \t]*>[ \t]?", re.M)


def boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}``, or None."""
    values = _BOXED.findall(text)
    return re.sub(r"\\([_%&#$])", r"\1", values[-1]).strip() if values else None


def plain(text: str) -> str:
    """``text`` without markdown emphasis, heading marks, quote marks and ``\\boxed{}``."""
    text = _BOXED.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub("", _QUOTE.sub("", _HEADING.sub("", text)))
    return re.sub(r"\\([_%&#$])", r"\1", text)  # LaTeX escapes: high\_sodium


def json_values(text: str) -> list[Any]:
    """Every complete top-level JSON object or array in ``text``, in order (code fences and
    chatter around them are ignored; a cut-off object is not one). A Python-style literal
    with single quotes ("{'decision': 'recommend'}") counts as the object it writes."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    for match in re.finditer(r"[\[{]", text):
        if match.start() < position:
            continue
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            value, end = _python_literal(text, match.start())
        if isinstance(value, (dict, list)):
            values.append(value)
            position = end
    return values


def _python_literal(text: str, start: int) -> tuple[Any, int]:
    """The object a small model meant, opening at ``start``: a Python-style literal (single
    quotes), JSON with trailing commas, keys left unquoted; or (None, start)."""
    end = _closing(text, start)
    if end is None:
        return None, start
    span = re.sub(r",(\s*[}\]])", r"\1", text[start:end])
    span = re.sub(r"([{,]\s*)([A-Za-z_][\w ]*?)\s*:", r'\1"\2":', span)
    for candidate in (span, re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False",
                                                             re.sub(r"\bnull\b", "None", span)))):
        try:
            return json.loads(candidate), end
        except ValueError:
            pass
        try:
            return ast.literal_eval(candidate), end
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            pass
    return None, start


def without_objects(text: str) -> str:
    """``text`` with every bracketed JSON-like block removed (an echoed reference or template
    is not a decision in words)."""
    out, position = [], 0
    for match in re.finditer(r"[\[{]", text):
        if match.start() < position:
            continue
        end = _closing(text, match.start())
        if end is not None and end - match.start() > 20:
            out.append(text[position:match.start()])
            position = end
    out.append(text[position:])
    return "".join(out)


def _closing(text: str, start: int) -> int | None:
    """The index after the bracket closing the one at ``start`` (quotes respected)."""
    depth, quote, escaped = 0, "", False
    for index in range(start, min(len(text), start + 20000)):
        char = text[index]
        if quote:
            escaped = not escaped and char == "\\"
            if char == quote and not escaped:
                quote = ""
            continue
        if char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def last_object_with(text: str, keys: tuple[str, ...]) -> tuple[dict[str, Any], str] | None:
    """The last JSON object of ``text`` holding one of ``keys`` (matched case-insensitively,
    also one level down), with the key found."""
    for value in reversed(json_values(text)):
        for candidate in _objects_in(value):
            lowered = {str(k).lower(): k for k in candidate}
            for key in keys:
                if key in lowered:
                    return candidate, lowered[key]
    return None


def _objects_in(value: Any) -> Iterator[dict[str, Any]]:
    """The objects of a JSON value, an object's inner objects before it ({"answer":
    {"decision": ...}, "alternative": ...} answers with the inner object)."""
    if isinstance(value, dict):
        for inner in value.values():
            if isinstance(inner, dict):
                yield inner
        yield value
    elif isinstance(value, list):
        for inner in reversed(value):
            if isinstance(inner, dict):
                yield inner


# ------------------------------------------------------------------- sentences and clauses

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]*]*\s+|\n+")
_CLAUSE = re.compile(r"[,;:]?\s*\b(?:but|however|though|although|yet|whereas|(?<!\ba\s)while)\b"
                     r"[,]?\s*|"
                     r"\s+[-–—]\s+", re.I)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (also split at line breaks), stripped, empty ones left out."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def clauses(sentence: str) -> list[str]:
    """A sentence cut at "but", "however", "although" and dashes: a caveat is its own clause."""
    return [c.strip() for c in _CLAUSE.split(sentence) if c and c.strip()]


# -------------------------------------------------------------------- refusals and hedges

_PROFESSIONAL = (r"(?:doctor|physician|dietitian|dietician|nutritionist|\w*ologist|clinician|"
                 r"healthcare|health\s*care|medical|provider|professional|specialist|care\s+team|"
                 r"pharmacist|nurse)")
_REFUSAL = re.compile(
    r"\b(?:i|we)\s*(?:can(?:no|')?t|cannot|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)"
    r"|am\s+not\s+in\s+a\s+position|'m\s+not\s+in\s+a\s+position|won'?t|will\s+not|must\s+decline"
    r"|don'?t\s+feel\s+comfortable|do\s+not\s+feel\s+comfortable|'m\s+not\s+comfortable"
    r"|am\s+not\s+comfortable|shouldn'?t|should\s+not)\s+(?:to\s+)?(?:\w+\s+){0,2}?"
    r"(?:provide|give|offer|make|advise|endorse|answer|help)\b(?!\s+(?:you\s+)?(?:a\s+|an\s+)?(?:definitive|definite|clear|simple"
    r"|single|straight|firm|conclusive|certain|yes|one)\b)"
    rf"|\bmedical\s+advice\b|\b(?:consult|speak\s+(?:with|to)|talk\s+(?:with|to)|check\s+with"
    rf"|ask|see|contact|work\s+with|discuss\w*\s+(?:[\w'’-]+\s+){{0,3}}?with)"
    rf"\s+(?:your|a|an|their|the|his|her)\s+(?:[\w'’-]+\s+){{0,2}}"
    rf"{_PROFESSIONAL}"
    rf"|\bnot\s+(?:a|your)\s+(?:\w+\s+)?{_PROFESSIONAL}"
    rf"|\b(?:question|matter|decision|call)\s+(?:best\s+)?(?:for|to\s+(?:discuss|raise)\s+with)"
    rf"\s+(?:your|their|his|her|a|an|the)\s+(?:[\w'’-]+\s+){{0,2}}{_PROFESSIONAL}"
    rf"|\bbest\s+(?:answered|judged|assessed|decided)\s+by\s+(?:your|their|a|an|the)\s+"
    rf"(?:[\w'’-]+\s+){{0,2}}{_PROFESSIONAL}"
    r"|\bi'?m\s+sorry\b|\bi\s+apologi[sz]e\b|\bunable\s+to\s+(?:provide|give|help)\b"
    rf"|{_PROFESSIONAL}s?\s+(?:should|can|could|would|must|is\s+best\s+placed\s+to)\s+(?:\w+\s+)?"
    r"(?:make|decide|advise|assess|guide|determine|help|answer|review|check|evaluate"
    r"|look)\b", re.I)
_HEDGE = re.compile(
    r"\bit\s+(?:really\s+|all\s+)?depends\b|\bdepends\s+(?:on|upon|heavily|largely|entirely)\b"
    r"|\bdepending\s+on\s+(?:whether|if|how|which)\b"
    r"|\b(?:could|can|might|may)\s+go\s+either\s+way\b|\beither\s+(?:yes|no|way)\b"
    r"|\b(?:both\s+)?yes\s+and\s+no\b|\bmay\s+or\s+may\s+not\b|\bmight\s+or\s+might\s+not\b"
    r"|\b(?:can(?:no|')?t|cannot|unable\s+to|not\s+possible\s+to|impossible\s+to|hard\s+to"
    r"|difficult\s+to|not\s+able\s+to)\s+(?:\w+\s+){0,2}?(?:say|determine|tell|decide|judge"
    r"|conclude|be\s+sure|rank|choose|order|pick|compare|call|assess|evaluate|judge"
    r"|pin\s+down|narrow\s+(?:it\s+)?down|settle\s+on|commit\s+to"
    r"|put\s+(?:them|these|the\s+dishes|it)\s+in\s+(?:any\s+|an\s+)?order"
    r"|(?:give|provide|offer)\s+(?:you\s+)?an?\s+(?:definitive|definite|clear|simple|single"
    r"|straight|firm|conclusive|certain))\b"
    r"|\b(?:not|in)sufficient\s+(?:enough\s+)?(?:information|data|detail)"
    r"|\bnot\s+enough\s+(?:information|data|detail)|\bmore\s+(?:information|details?|context)"
    r"\s+(?:is|are|would\s+be)\s+needed\b|\bno\s+(?:clear|definitive|single)\s+answer\b"
    r"|\bwhether\b.*\b(?:depends|unclear|varies)\b|\bvaries\s+(?:by|with|depending)\b"
    r"|\bneither\s+clearly\b|\bneither\s+(?:a\s+)?(?:clear\s+)?yes\s+nor\b"
    r"|\bcannot\s+be\s+(?:clearly\s+)?(?:determined|ranked|decided)\b", re.I)


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text))


def is_hedge(text: str) -> bool:
    return bool(_HEDGE.search(text))


def declined(text: str) -> str | None:
    """``refusal`` or ``hedge`` when the text declines or does not commit, else None (only
    asked once the task's parser found no committed answer)."""
    if is_refusal(text):
        return "refusal"
    if is_hedge(text):
        return "hedge"
    return None


def committed_clauses(text: str) -> list[str]:
    """The clauses of ``text`` that neither decline nor hedge, in order; a question ("Is
    this food healthy for the user?") is not an answer and is left out too."""
    kept = []
    for sentence in sentences(plain(text)):
        if sentence.rstrip(" *_)\"'").endswith("?"):
            continue
        parts = clauses(sentence)
        if parts and is_hedge(parts[0]):
            # "It depends: if ..., a good choice, but if ..., a poor one" commits to nothing;
            # "It depends on portion size, but overall I would not recommend it" concludes
            parts = [c for c in parts[1:] if CONCLUDING.match(c)]
        kept += [c for c in parts if not is_refusal(c) and not is_hedge(c)]
    return kept


# A clause that concludes: "Overall, ...", "In the end ...", "Ultimately ..."
CONCLUDING = re.compile(r"^\W*(?:overall|in\s+conclusion|in\s+summary|to\s+conclude|therefore"
                        r"|thus|hence|so|bottom\s+line|verdict|final(?:ly)?|all\s+in\s+all"
                        r"|on\s+balance|conclusion|in\s+short|ultimately|in\s+the\s+end"
                        r"|on\s+the\s+whole)\b", re.I)
