"""The rules that read an answer, by its shape (:data:`nutrireason.schema.ANSWER_KINDS`).

A task declares the shape of its answers on its spec (``TaskSpec.answer``); the answer
extractor and the graded corpus read through :func:`final_reader`, so neither names a task.
A ranking's options are the item's ``dishes`` (letter -> {title, ...}): an answer may name an
option by its title.
"""

from __future__ import annotations

from typing import Any

from nutrireason.methods.fam_prompts import read_dish, read_rank
from nutrireason.methods.ngqa_prompts import KIND_READERS, read_sentence
from nutrireason.methods.quantity import read_quantity
from nutrireason.methods.reading import Parser, Reading, read_output
from nutrireason.schema import answer_kind


def option_titles(item: dict[str, Any]) -> dict[str, str]:
    """A ranking item's option letters and titles ({} for other items)."""
    return {str(k): str((v or {}).get("title") or "") if isinstance(v, dict) else str(v or "")
            for k, v in (item.get("dishes") or {}).items()}


def final_reader(kind: str, titles: dict[str, str] | None = None) -> Parser:
    """The rules that read a final answer of shape ``kind`` (a sentence where the shape is
    unknown)."""
    if kind == "decision":
        return read_dish
    if kind == "ranking":
        return lambda text: read_rank(text, titles or {})
    if kind == "quantity":
        return read_quantity
    return KIND_READERS.get(kind, read_sentence)


def reader_for_task(task: str, item: dict[str, Any]) -> Parser:
    """The rules that read ``task``'s final answers for ``item`` (a registered task's shape)."""
    return final_reader(answer_kind(task) or "", option_titles(item))


def read_whole(kind: str, text: str | None, titles: dict[str, str] | None = None,
               reasoning: str | None = None, finish_reason: str | None = None) -> Reading:
    """One whole output as a grader reads it: the reasoning set apart, a cut-off output
    refused, the final answer read by ``kind``'s rules."""
    return read_output(text, final_reader(kind, titles), reasoning, finish_reason)
