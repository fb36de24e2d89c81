"""Reasoning apart from the final answer: what a grader reads is the final answer only.

Reasoning models write their thinking in the answer text (``<think>...</think>``, gpt-oss's
harmony ``analysis`` / ``final`` channels) or in a field of their own (``reasoning_content`` on
vLLM, DeepSeek and llama.cpp's server, ``reasoning`` on others). :func:`split_reasoning` takes
one call's text, that field and its ``finish_reason`` and gives back the final answer, the
reasoning and whether the call was cut off. Forms, by rule:

==========================  ===================================================================
form                        rule
==========================  ===================================================================
``plain``                   no reasoning markers: the whole text is the final answer
``think``                   ``<think>``/``<thinking>``/``<reasoning>`` blocks: the answer is the
                            text after the last closing tag (else the text outside the blocks);
                            empty and repeated blocks are reasoning too
``think_no_open``           a closing tag without an opening one (the chat template opened the
                            block): everything up to the last closing tag is reasoning
``think_unclosed``          a block opened and never closed: cut off, ``truncated``
``harmony``                 ``<|channel|>final<|message|>`` (or ``assistantfinal`` once the
                            special tokens were stripped): the answer is the last final
                            channel's message; analysis without a final channel is ``truncated``
``reasoning_field``         the server's own reasoning field: the text is the answer
``length``                  ``finish_reason`` is ``length``: cut off, ``truncated``, whatever the
                            text holds
==========================  ===================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAGS = "think|thinking|reasoning|thought"
_OPEN = re.compile(rf"<\s*(?:{_TAGS})\s*>", re.I)
_CLOSE = re.compile(rf"<\s*/\s*(?:{_TAGS})\s*>", re.I)
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*(?:<\|constrain\|>\s*\w+\s*)?<\|message\|>",
                            re.I)
_HARMONY_CHANNEL = re.compile(r"<\|channel\|>\s*(?:analysis|commentary)", re.I)
_HARMONY_TOKEN = re.compile(r"<\|[a-z_]+\|>", re.I)
# gpt-oss output read with the special tokens stripped: "analysis...assistantfinal...".
_STRIPPED_ANALYSIS = re.compile(r"^\s*analysis(?=\S)", re.I)
# ... and with no final channel: "analysisWe need to ..." (lower-case, glued to a capital).
_STRIPPED_ANALYSIS_ONLY = re.compile(r"^\s*analysis(?=[A-Z\"'])")
_STRIPPED_FINAL = re.compile(r"assistant\s*final(?=\S|\s)", re.I)
TRUNCATED_FORMS = ("length", "think_unclosed", "harmony_unfinished")


@dataclass(frozen=True)
class Split:
    """One call's output: ``final`` is what the task parsers read; ``reasoning`` stays in the
    record; ``truncated`` says the call was cut off (never parsed); ``form`` names the rule."""

    final: str
    reasoning: str
    form: str

    @property
    def truncated(self) -> bool:
        return self.form in TRUNCATED_FORMS


def split_reasoning(text: str | None, reasoning: str | None = None,
                    finish_reason: str | None = None) -> Split:
    """The final answer, the reasoning and the form of one call's output (table above)."""
    text = text or ""
    field = (reasoning or "").strip()
    found = _split_text(text)
    joined = "\n\n".join(part for part in (field, found.reasoning) if part)
    if finish_reason == "length":
        return Split("", joined or text.strip(), "length")
    if field and found.form == "plain":
        return Split(found.final, joined, "reasoning_field")
    return Split(found.final, joined, found.form)


def _split_text(text: str) -> Split:
    if "<|channel|>" in text or "<|message|>" in text:
        return _harmony(text)
    if _STRIPPED_ANALYSIS.match(text) and _STRIPPED_FINAL.search(text):
        *analysis, final = _STRIPPED_FINAL.split(text)
        reasoning = _STRIPPED_ANALYSIS.sub("", "".join(analysis), count=1)
        return Split(final.strip(), reasoning.strip(), "harmony")
    if _STRIPPED_ANALYSIS_ONLY.match(text):
        return Split("", _STRIPPED_ANALYSIS_ONLY.sub("", text, count=1).strip(),
                     "harmony_unfinished")
    closes = list(_CLOSE.finditer(text))
    opens = list(_OPEN.finditer(text))
    if not opens and not closes:
        return Split(text.strip(), "", "plain")
    if opens and (not closes or opens[-1].start() > closes[-1].start()):
        return Split("", _OPEN.sub("", _CLOSE.sub("", text)).strip(), "think_unclosed")
    last = closes[-1]
    reasoning = _OPEN.sub("", _CLOSE.sub("\n", text[:last.start()])).strip()
    after = text[last.end():].strip()
    if not opens:
        return Split(after, reasoning, "think_no_open")
    if not after:
        after = _outside_blocks(text)
    return Split(after, reasoning, "think")


def _outside_blocks(text: str) -> str:
    """The text outside every complete think block."""
    kept, depth, position = [], 0, 0
    for match in sorted([*_OPEN.finditer(text), *_CLOSE.finditer(text)], key=lambda m: m.start()):
        if depth == 0:
            kept.append(text[position:match.start()])
        depth = depth + 1 if _OPEN.fullmatch(match.group(0)) else max(depth - 1, 0)
        position = match.end()
    if depth == 0:
        kept.append(text[position:])
    return "".join(kept).strip()


def _harmony(text: str) -> Split:
    """gpt-oss's channels: the last ``final`` message is the answer, the rest reasoning."""
    finals = list(_HARMONY_FINAL.finditer(text))
    if not finals:
        return Split("", _HARMONY_TOKEN.sub(" ", text).strip(), "harmony_unfinished")
    last = finals[-1]
    answer = re.split(r"<\|(?:end|return|call|start)\|>", text[last.end():], maxsplit=1)[0]
    reasoning = _HARMONY_TOKEN.sub(" ", _HARMONY_CHANNEL.sub(" ", text[:last.start()]))
    reasoning = re.sub(r"\bassistant\b\s*$", "", " ".join(reasoning.split())).strip()
    return Split(answer.strip(), reasoning, "harmony")
