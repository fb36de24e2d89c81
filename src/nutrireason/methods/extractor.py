"""A second model that reads the answers the rules cannot read (``nutrireason run --extractor``).

Off by default. For a sample whose final answer no rule could read (reason ``no_answer``; never
for an answer cut off, a refusal or a hedge), the extractor model is shown the question and
that final answer only (never the reasoning) and asked to write the answer in the task's
shortest form, or ``NONE``; its reply is read by the same task rules. The record keeps both
readings: ``parsed`` / ``parse_ok`` stay the rules' reading, ``extra["extractor"]`` holds the
extractor's, and ``score`` reports the metrics both ways (``with_extractor`` in metrics.json).
This is the checker model of OpenAI's simple-evals, kept apart from the main score.
"""

from __future__ import annotations

import json
from typing import Any

from nutrireason.methods.base import Generator
from nutrireason.methods.fam_prompts import read_dish, read_rank
from nutrireason.methods.ngqa_prompts import reader_for
from nutrireason.methods.reading import Parser, Reading, final_text, read_response
from nutrireason.models.types import ChatRequest, GenerationSettings, Message

FORMATS = {
    "binary": 'exactly "Yes" or "No"',
    "multi_label": "the food's nutrient tags as a comma-separated list, each written like "
                   "high_sodium or low_protein (high or low, then carb, protein, sugar, sodium, "
                   "cholesterol, saturated_fat or calorie)",
    "text_generation": 'one sentence: "Yes, because the food is ..." or "No, because the food '
                       'is ..." with the reasons the answer gives (like "high in sodium")',
    "fam_dish": 'JSON {"decision": "recommend" or "not_recommend"}',
    "fam_rank": 'JSON {"ranking": ["<letter>", ...]} with the dish letters from most to least '
                "suitable, as far as the answer places them",
}
SYSTEM = ("You extract answers. You are given a question and the final answer another model "
          "wrote. Write that model's answer in the requested form, adding nothing of your "
          "own. If the answer declines, does not commit or gives no answer, reply NONE.")
SETTINGS = GenerationSettings(temperature=0.0, max_tokens=256)


def extractable(task: str) -> bool:
    return task in FORMATS


def item_question(item: dict[str, Any]) -> str:
    """The question as the extractor sees it (FAM-Bench: the question and the dish titles)."""
    if item.get("task") == "fam_rank":
        titles = {k: v.get("title") for k, v in (item.get("dishes") or {}).items()}
        labels = ", ".join(item.get("condition_labels") or [])
        return (f"Rank dishes A, B, C and D from most to least suitable for someone managing "
                f"{labels}. The dishes: {json.dumps(titles, ensure_ascii=False)}")
    if item.get("task") == "fam_dish":
        labels = ", ".join(item.get("condition_labels") or [])
        title = (item.get("dish") or {}).get("title", "")
        return f"Is the dish {title!r} suitable for someone managing {labels}?"
    return str(item.get("question") or "")


def extraction_request(task: str, item: dict[str, Any], final: str) -> ChatRequest:
    """The extractor's one request for ``final`` (a final answer, reasoning left out)."""
    prompt = (f"Question:\n{item_question(item)}\n\nThe model's final answer:\n<<<\n{final}\n>>>"
              f"\n\nWrite the model's answer as {FORMATS[task]}, or NONE.")
    return ChatRequest(messages=[Message(role="system", content=SYSTEM),
                                 Message(role="user", content=prompt)], settings=SETTINGS)


def task_parser(task: str, item: dict[str, Any]) -> Parser:
    """The rules that read ``task``'s answers (those the methods use)."""
    if task == "fam_dish":
        return read_dish
    if task == "fam_rank":
        titles = {k: str((v or {}).get("title") or "") for k, v in
                  (item.get("dishes") or {}).items()}
        return lambda text: read_rank(text, titles)
    return reader_for(task)


async def extract(task: str, item: dict[str, Any], final: str, backend: Generator) -> Reading:
    """The extractor's reading of ``final`` (one call)."""
    response = await backend.generate(extraction_request(task, item, final))
    if final_text(response).strip().strip(".").upper() == "NONE":
        return Reading(None, False, "none", "no_answer")
    reading = read_response(response, task_parser(task, item))
    if task == "fam_dish" and reading.ok:
        return Reading({"decision": reading.value["decision"], "ingredients": []}, True,
                       reading.rule, None, reading.form)
    return reading
